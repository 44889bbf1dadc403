// Transfer planning shared by `get`, `put` and `bench`: cutting an object
// into parts, and uploading a buffer (one PutObject or a parallel multipart
// upload that is aborted on failure).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::tools {

class ProgressBar;

struct Part {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Consecutive parts of `part_size` covering [0, size); the last may be short.
// Zero size gives no parts. REQUIRES: part_size > 0.
std::vector<Part> SplitIntoParts(uint64_t size, uint64_t part_size);

// S3 allows at most s3::kMaxPartNumber parts: grows `part_size` (to a whole MiB) until
// `size` fits. REQUIRES: part_size > 0.
uint64_t FitPartSize(uint64_t size, uint64_t part_size);

struct UploadSpec {
  std::string bucket, key, content_type;
  uint64_t part_size = 16 << 20;  // objects below it go in one PutObject
  int window = 16;                // parts in flight
  // Per part (and per PutObject); kCrc32c also creates the upload with it.
  s3::BodyChecksum checksum = s3::BodyChecksum::kMd5;
};

// Uploads `size` bytes; `part_bytes` gives the bytes of a part (valid until
// the upload returns). `bar` (optional) is advanced as parts complete.
// Returns the number of requests made through *requests when given.
Status UploadBuffer(s3::ObjectClient& client, const UploadSpec& spec,
                    const std::function<std::span<const std::byte>(const Part&)>& part_bytes,
                    uint64_t size, ProgressBar* bar, uint64_t* requests = nullptr);

}  // namespace bucketfs::tools
