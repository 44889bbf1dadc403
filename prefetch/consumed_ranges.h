// ConsumedRanges: the byte ranges of parts a sequential stream let go because
// every page of them was read, merged. It tells a kernel re-read from a late
// first read in the reader's stats (ReaderStats::rereads), and lets a stream
// that comes back over read bytes skip them; it holds at most one entry per
// part of the file. Internal to prefetch/.
//
// Not thread-safe: the reader that owns it guards it with its lock.
#pragma once

#include <cstdint>
#include <map>

namespace bucketfs::prefetch::internal {

class ConsumedRanges {
 public:
  // Adds [start, end), merged with the ranges it touches or overlaps.
  void Add(uint64_t start, uint64_t end);
  // Whether [start, end) shares a byte with a range added before.
  bool Overlaps(uint64_t start, uint64_t end) const;
  // The end of the range holding `pos`, or pos when none does.
  uint64_t EndOfRangeAt(uint64_t pos) const;
  // The start of the first range that starts after `pos`, or `none`.
  uint64_t NextStartAfter(uint64_t pos, uint64_t none) const;

 private:
  std::map<uint64_t, uint64_t> ranges_;  // start -> end; disjoint, never touching
};

}  // namespace bucketfs::prefetch::internal
