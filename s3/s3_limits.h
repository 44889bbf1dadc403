// The limits S3 puts on objects and multipart uploads, in one place: every
// layer that sizes parts or checks part numbers uses these names.
#pragma once

#include <cstdint>

namespace bucketfs::s3 {

inline constexpr int kMaxPartNumber = 10000;                // parts per upload (numbered from 1)
inline constexpr uint64_t kMinPartSize = 5ull << 20;        // every part but the last
inline constexpr uint64_t kMaxPartSize = 5ull << 30;        // one part (UploadPart, UploadPartCopy)
inline constexpr uint64_t kMaxCopyObjectSize = 5ull << 30;  // one CopyObject
inline constexpr uint64_t kMaxObjectSize = 5ull << 40;      // one object

}  // namespace bucketfs::s3
