// SpareMemory: huge-page mappings a mount's part buffers no longer use, kept
// so that the next buffer, on either side of the mount, is made from them.
//
// Faulting in fresh memory is the largest cost of a part in VMs that zero
// and hand back pages slowly, and the read and write paths size their parts
// differently (8 and 16 MiB by default). So spare memory is kept as
// mappings of any length, in whole huge pages: a buffer is one spare mapping
// of its length, the front of a longer one (the rest stays spare), or spare
// mappings moved next to each other with mremap (page tables move, no page is
// zeroed or copied). Only mapped buffers (kHugeBufferBytes and up, memory/
// buffer.h) are kept. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/buffer.h"

namespace bucketfs::memory {

class SpareMemory {
 public:
  // Keeps at most `max_bytes` of mappings; what would pass that is freed.
  explicit SpareMemory(uint64_t max_bytes) : max_bytes_(max_bytes) {}
  ~SpareMemory();
  SpareMemory(const SpareMemory&) = delete;
  SpareMemory& operator=(const SpareMemory&) = delete;

  // A buffer as AllocateBuffer(size) makes it (the first `size` bytes
  // usable, contents unspecified), made from spare mappings; empty when fewer
  // than AllocatedBytes(size) bytes are spare, when size is below
  // kHugeBufferBytes, or when the mappings could not be moved together.
  Buffer Take(uint64_t size);
  // Keeps a buffer from AllocateBuffer (or Take) when it is mapped and fits
  // within max_bytes; frees it otherwise.
  void Give(Buffer buffer);

  uint64_t bytes() const;  // kept now
  uint64_t max_bytes() const { return max_bytes_; }
  uint64_t joins() const;  // buffers made of more than one mapping

 private:
  struct Mapping {
    std::byte* start;
    uint64_t length;
  };
  // Spare mappings, taken from the list, moved into one range of `length`
  // bytes; empty (and the mappings freed) when a move fails.
  static Buffer Join(const std::vector<Mapping>& parts, uint64_t length);

  const uint64_t max_bytes_;
  mutable Mutex mu_;
  std::vector<Mapping> spare_ GUARDED_BY(mu_);
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
  uint64_t joins_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::memory
