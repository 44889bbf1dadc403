#include "prefetch/consumed_ranges.h"

#include <algorithm>
#include <iterator>

namespace bucketfs::prefetch::internal {

void ConsumedRanges::Add(uint64_t start, uint64_t end) {
  auto next = ranges_.upper_bound(start);
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= start) {  // touches or overlaps the range before
      start = prev->first;
      end = std::max(end, prev->second);
      ranges_.erase(prev);
    }
  }
  while (next != ranges_.end() && next->first <= end) {
    end = std::max(end, next->second);
    next = ranges_.erase(next);
  }
  ranges_.emplace(start, end);
}

bool ConsumedRanges::Overlaps(uint64_t start, uint64_t end) const {
  // The last range starting before `end` is the only one that can reach past
  // `start` (ranges are merged, so they do not overlap each other).
  auto next = ranges_.lower_bound(end);
  if (next == ranges_.begin()) return false;
  return std::prev(next)->second > start;
}

uint64_t ConsumedRanges::EndOfRangeAt(uint64_t pos) const {
  auto next = ranges_.upper_bound(pos);
  if (next == ranges_.begin()) return pos;
  const auto& [start, end] = *std::prev(next);
  return end > pos ? end : pos;
}

uint64_t ConsumedRanges::NextStartAfter(uint64_t pos, uint64_t none) const {
  auto next = ranges_.upper_bound(pos);
  return next == ranges_.end() ? none : next->first;
}

}  // namespace bucketfs::prefetch::internal
