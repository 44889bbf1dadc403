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
  s3::GetObjectParams p;
  p.bucket = object.bucket;
  p.key = object.key;
  p.offset = offset;
  p.length = dest.size();
  p.if_match = object.etag;  // empty: the store gave no ETag, nothing to pin
  p.run_on_caller = on_caller;
  const uint64_t want = dest.size();
  client_->GetObjectAsync(
      p, dest,
      [done = std::move(done), want, key = object.key, offset](Result<s3::GetObjectResult> r) {
        if (!r.ok()) {
          Error e = r.error();
          // The object changed since open: whatever the classifier said, the
          // file read fails with EIO (never ENOENT halfway through a file).
          if (e.code == "PreconditionFailed" || e.http_status == 412) e.errno_value = EIO;
          done(std::move(e));
          return;
        }
        if (r->bytes != want) {
          done(MakeError(EIO, "ShortRead",
                         "GET " + key + " at " + std::to_string(offset) + " returned " +
                             std::to_string(r->bytes) + " of " + std::to_string(want) + " bytes"));
          return;
        }
        done(Status::Ok());
      });
}

}  // namespace bucketfs::prefetch
