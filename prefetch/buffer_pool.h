// BufferPool: keeps freed part buffers (part_size bytes) for reuse,
// and allocates the large ones so that faulting them in is cheap.
//
// A part buffer is written once by the fetch (curl's receive buffer copied in)
// and then served. A fresh malloc'd buffer of several MiB is faulted in 4 KiB
// at a time, which costs a sequential reader much of its CPU, so buffers of
// at least kHugeBufferBytes are mapped directly, 2 MiB aligned, with transparent huge
// pages advised and populated in one call (a handful of faults, not
// thousands); a reused buffer costs nothing. A buffer in use is charged to
// the budget for all it holds (HeldBytes: a stream's 4 MiB part in an 8 MiB
// pooled buffer counts 8 MiB, all of it faulted in). Buffers in the pool hold
// no budget: the pool adds at most max_buffers * buffer_size bytes of
// resident memory on top of it.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch {

// Frees a part buffer the way AllocateBuffer made it.
struct BufferDeleter {
  size_t mapped = 0;  // length of the mapping; 0: allocated with new[]
  void operator()(std::byte* p) const;
};
using Buffer = std::unique_ptr<std::byte[], BufferDeleter>;

// Buffers at least this large are mapped directly with huge pages advised.
inline constexpr uint64_t kHugeBufferBytes = 2ull << 20;

// A buffer of `size` bytes, contents unspecified (the fetch overwrites every
// byte). Never null for size > 0 (throws std::bad_alloc like new[]).
Buffer AllocateBuffer(uint64_t size);

// The bytes AllocateBuffer(size) holds: `size`, or from kHugeBufferBytes up
// the whole huge pages it maps (populated, so resident).
uint64_t AllocatedBytes(uint64_t size);

class BufferPool {
 public:
  BufferPool(uint64_t buffer_size, size_t max_buffers);

  // A buffer of `size` bytes (contents unspecified). Sizes from half the
  // buffer size (and at least kHugeBufferBytes) up to it share the pool's
  // buffers (a stream's 4 MiB part: mapping and faulting in a fresh one for
  // every file cost more than the unused half of a pooled one); other sizes
  // are allocated as asked and never pooled.
  Buffer Get(uint64_t size);
  // Returns a buffer obtained from Get(size); kept if the pool has room.
  void Put(Buffer buffer, uint64_t size);
  // The bytes a buffer from Get(size) holds (a pooled buffer's whole size):
  // what a memory budget counts for it.
  uint64_t HeldBytes(uint64_t size) const;

  uint64_t reuses() const;
  size_t pooled() const;

 private:
  bool Pooled(uint64_t size) const;  // Get(size) hands out a buffer_size_ buffer

  const uint64_t buffer_size_;
  const size_t max_buffers_;
  mutable Mutex mu_;
  std::vector<Buffer> free_ GUARDED_BY(mu_);
  uint64_t reuses_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::prefetch
