#include "prefetch/object_client_range_source.h"

#include <cerrno>
#include <string>
#include <utility>

namespace bucketfs::prefetch {

ObjectClientRangeSource::ObjectClientRangeSource(std::shared_ptr<s3::ObjectClient> client)
    : client_(std::move(client)) {}

void ObjectClientRangeSource::FetchAsync(const ObjectVersion& object, uint64_t offset,
                                         std::span<std::byte> dest,
                                         std::function<void(Status)> done) {
  Fetch(object, offset, dest, /*on_caller=*/false, std::move(done));
}

void ObjectClientRangeSource::FetchForCaller(const ObjectVersion& object, uint64_t offset,
                                             std::span<std::byte> dest,
                                             std::function<void(Status)> done) {
  Fetch(object, offset, dest, /*on_caller=*/true, std::move(done));
}

void ObjectClientRangeSource::Fetch(const ObjectVersion& object, uint64_t offset,
                                    std::span<std::byte> dest, bool on_caller,
                                    std::function<void(Status)> done) {
  if (dest.empty()) {
    done(Status::Ok());
    return;
  }
  s3::GetObjectParams p = s3::PinnedRangeGet(object, offset, dest.size());
  p.run_on_caller = on_caller;
  client_->GetObjectAsync(p, dest, [done = std::move(done)](Result<s3::GetObjectResult> r) {
    if (!r.ok()) {
      Error e = r.error();
      // The object changed since open: whatever the classifier said, the
      // file read fails with EIO (never ENOENT halfway through a file).
      if (e.code == "PreconditionFailed" || e.http_status == 412) e.errno_value = EIO;
      done(std::move(e));
      return;
    }
    done(Status::Ok());  // a ranged GET succeeds only with every byte asked for
  });
}

}  // namespace bucketfs::prefetch
