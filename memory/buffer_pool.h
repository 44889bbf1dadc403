// BufferPool: keeps freed part buffers of one size (the read path's
// part_size) for reuse, up to a count: a reused buffer costs no page faults (memory/buffer.h). A
// buffer in use is charged to the budget for all it holds (HeldBytes: a stream's 4 MiB part in an 8
// MiB pooled buffer counts 8 MiB, all of it faulted in). Buffers in the pool hold no budget: the
// pool adds at most max_buffers * buffer_size bytes of resident memory on top of it. With a
// SpareMemory (memory/spare_memory.h), shared with the write path, buffers the pool has no room
// for go there and fresh ones come from there first. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/buffer.h"
#include "memory/spare_memory.h"

namespace bucketfs::memory {

class BufferPool {
 public:
  BufferPool(uint64_t buffer_size, size_t max_buffers,
             std::shared_ptr<SpareMemory> spare = nullptr);

  // A buffer of `size` bytes (contents unspecified). Sizes from half the
  // buffer size (and at least kHugeBufferBytes) up to it share the pool's
  // buffers (a stream's 4 MiB part: mapping and faulting in a fresh one for
  // every file cost more than the unused half of a pooled one); other sizes
  // are allocated as asked and never pooled.
  Buffer Get(uint64_t size);
  // Returns a buffer obtained from Get(size); kept if the pool has room
  // (else given to the spare memory, if any).
  void Put(Buffer buffer, uint64_t size);
  // The bytes a buffer from Get(size) holds (a pooled buffer's whole size):
  // what a memory budget counts for it.
  uint64_t HeldBytes(uint64_t size) const;

  uint64_t reuses() const;
  size_t pooled() const;
  size_t capacity() const { return max_buffers_; }  // buffers it may keep
  // Get(buffer size) would reuse memory: a pooled buffer, or enough spare.
  bool HasSpare() const;

 private:
  bool Pooled(uint64_t size) const;  // Get(size) hands out a buffer_size_ buffer
  Buffer Fresh(uint64_t size);       // from the spare memory, else newly mapped

  const uint64_t buffer_size_;
  const size_t max_buffers_;
  const std::shared_ptr<SpareMemory> spare_;  // may be null
  mutable Mutex mu_;
  std::vector<Buffer> free_ GUARDED_BY(mu_);
  uint64_t reuses_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::memory
