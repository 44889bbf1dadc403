// ObjectClientRangeSource: the real RangeSource — one ranged GetObjectAsync
// per fetch, the body streamed by the S3 client straight into the part buffer,
// with If-Match: <etag seen at open> so a changed object fails the read (EIO)
// instead of mixing two versions. A body shorter than asked fails in the
// client (GetObjectParams).
#pragma once

#include <memory>

#include "prefetch/range_source.h"
#include "s3/object_client.h"

namespace bucketfs::prefetch {

class ObjectClientRangeSource : public RangeSource {
 public:
  // REQUIRES: client != nullptr
  explicit ObjectClientRangeSource(std::shared_ptr<s3::ObjectClient> client);

  void FetchAsync(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                  std::function<void(Status)> done) override;
  // A GET the S3 client may run on the calling thread (run_on_caller).
  void FetchForCaller(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                      std::function<void(Status)> done) override;

 private:
  void Fetch(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
             bool on_caller, std::function<void(Status)> done);

  const std::shared_ptr<s3::ObjectClient> client_;
};

}  // namespace bucketfs::prefetch
