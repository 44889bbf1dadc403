#include "prefetch/read_coverage.h"

#include <algorithm>

namespace bucketfs::prefetch {

ReadCoverage::ReadCoverage(uint64_t size)
    : size_(size), pages_(static_cast<size_t>((size + kPage - 1) / kPage), false) {}

bool ReadCoverage::Add(uint64_t off, uint64_t end) {
  end = std::min(end, size_);
  if (off >= end) return complete();
  // Pages whole inside [off, end): from off rounded up to the page that ends
  // at or before `end` (the part's short last page ends at size_).
  auto first = static_cast<size_t>((off + kPage - 1) / kPage);
  auto last = static_cast<size_t>(end == size_ ? pages_.size() : end / kPage);
  for (size_t i = first; i < last; ++i) {
    if (!pages_[i]) {
      pages_[i] = true;
      ++covered_;
    }
  }
  return complete();
}

}  // namespace bucketfs::prefetch
