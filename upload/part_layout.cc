// PartSizeFor: see part_layout.h.
#include "upload/part_layout.h"

#include <algorithm>

#include "s3/s3_limits.h"

namespace bucketfs::upload {

uint64_t PartSizeFor(uint64_t base, int part_number) {
  const int doublings = std::min((part_number - 1) / PartLayout::kPartsPerGroup, 20);
  return std::min(base << doublings, s3::kMaxPartSize);
}

}  // namespace bucketfs::upload
