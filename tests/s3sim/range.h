// HTTP Range header parsing for GetObject (one byte range, as S3 supports) and
// the copy-source range of UploadPartCopy.
#ifndef TESTS_S3SIM_RANGE_H_
#define TESTS_S3SIM_RANGE_H_

#include <cstdint>
#include <string_view>

namespace s3sim {

struct RangeResult {
  enum class Kind {
    kWhole,          // no usable range: serve the whole object (200)
    kPartial,        // serve [first, last] (206)
    kUnsatisfiable,  // 416 InvalidRange
  };
  Kind kind = Kind::kWhole;
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
};

// "bytes=a-b", "bytes=a-", "bytes=-n" against an object of `size` bytes.
// Syntactically invalid or multi-range headers are ignored (whole object),
// as S3 does; a start beyond the end, or a zero suffix, is unsatisfiable.
RangeResult ParseRange(std::string_view header, uint64_t size);

}  // namespace s3sim

#endif  // TESTS_S3SIM_RANGE_H_
