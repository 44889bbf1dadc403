// RandomLocality: whether a reader's random reads land near each other,
// which decides how much a random read fetches (ObjectReader::PlanBlock).
//
// A random read fetches at least random_floor bytes (its aligned block) so
// that the next reads near it are served from memory. That pays only when
// reads come back to the blocks of recent ones: small reads spread over a
// large file would each fetch the floor to use a page of it.
//
// So the floor is used while it could help: for the first kWindow random reads
// of a file, and while at least kNearReads of the last kWindow reads fell in
// the same floor-aligned block as one of the `recent` reads before each (the
// blocks a floor-sized cache of `recent` blocks would hold). Otherwise a read
// fetches just its pages (4 KiB aligned). Near reads are counted whatever
// was fetched, so a pattern that comes back to recent blocks gets the floor
// back at once; one chance hit (4 recent blocks of 16,384 in a 1 GiB file)
// does not. A fetch is never larger than it was with the floor alone.
//
// Not thread-safe: the reader that owns it guards it with its lock.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bucketfs::prefetch {

class RandomLocality {
 public:
  static constexpr uint64_t kPage = 4096;
  static constexpr int kWindow = 16;    // reads that decide (and the warm-up)
  static constexpr int kNearReads = 2;  // near reads among them that keep the floor

  // `block`: the floor (> 0); `recent`: how many recent reads a block may
  // serve again (random_cache_blocks, at least 1).
  RandomLocality(uint64_t block, int recent);

  // Notes a random read of [o, e) (o < e) and returns the range to fetch
  // for it: its floor-aligned block(s) while reads are near each other, else
  // its pages. Never starts after o nor ends before e; `size` caps the end.
  struct Range {
    uint64_t start = 0;
    uint64_t end = 0;
  };
  Range NoteRead(uint64_t o, uint64_t e, uint64_t size);

  // True while reads fetch whole floor blocks.
  bool floor_in_use() const {
    return seen_ <= kWindow || std::popcount(near_history_) >= kNearReads;
  }

 private:
  struct Span {
    uint64_t first = 0;  // floor block indices of one read, inclusive
    uint64_t last = 0;
  };
  bool Near(const Span& s) const;

  const uint64_t block_;
  std::vector<Span> recent_;  // ring of the latest reads' blocks
  size_t next_ = 0;           // slot of recent_ the next read takes
  size_t filled_ = 0;         // slots of recent_ in use
  int seen_ = 0;              // reads noted, up to kWindow + 1
  // Bit i: the read i reads ago (0 = the latest) was near a recent one.
  uint32_t near_history_ = 0;
};

}  // namespace bucketfs::prefetch
