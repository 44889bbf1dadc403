// ReadCoverage: which pages of one part reads have asked for, so that a
// sequential stream lets go of a part as soon as every byte of it was read
// once instead of keeping it backward_tolerance behind the reader.
//
// Through the page cache the kernel asks for each page once (a READ per
// readahead chunk, page aligned, possibly out of order from several threads):
// once every page of a part was requested, no late READ can need it, and its
// buffer can go back to the pool at once instead of being kept behind every
// stream. A page counts only when a single read covers it whole, so unaligned
// reads (direct I/O at odd sizes) never complete a part early: they fall back
// to the distance rule.
//
// Not thread-safe: the reader that owns the part guards it with its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bucketfs::prefetch {

class ReadCoverage {
 public:
  static constexpr uint64_t kPage = 4096;

  // Coverage of a part of `size` bytes; the last page may be short.
  explicit ReadCoverage(uint64_t size);

  // Notes a read of [off, end), offsets relative to the part (clamped to it).
  // Returns true when every page has now been read.
  bool Add(uint64_t off, uint64_t end);
  bool complete() const { return covered_ == pages_.size(); }

 private:
  const uint64_t size_;
  std::vector<bool> pages_;
  size_t covered_ = 0;
};

}  // namespace bucketfs::prefetch
