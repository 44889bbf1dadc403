// PartBufferBudget: a byte budget that blocks, with buffers kept for reuse
// inside it, for the write path: the memory for part bytes in flight, shared
// by the writers of a mount (upload/staged_upload.h; the read path, which
// never waits, uses MemoryBudget, memory/memory_budget.h). A buffer is taken
// before a part is read back or filled and given back when its upload (and
// staging write) is done, so a mount's part memory stays within one bound
// however many files it writes; Take blocks while the bound is reached (the
// writers' backpressure).
//
// Two kinds of buffers share the capacity: Take, for a part about to be sent
// (at most half the capacity), and TakeFill, for a part a writer fills in
// memory (upload/filled_parts.h), held until the part is sent; fill buffers
// never pass the other half, so Take only ever waits for uploads to end.
// Buffers given back are kept for reuse (kept plus used within the capacity);
// a kept buffer larger than asked for is charged for all it holds, or not
// reused when that does not fit. With a SpareMemory (memory/spare_memory.h),
// shared with the read path, buffers given back go there instead and new
// ones come from there first, so that either side reuses what the other left.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/buffer.h"
#include "memory/spare_memory.h"

namespace bucketfs::memory {

// A buffer of part bytes taken from a PartBufferBudget (contents undefined
// until written). Move-only; give it back with PartBufferBudget::Give.
struct PartBuffer {
  Buffer data;            // parts of 2 MiB and more on huge pages (memory/buffer.h)
  uint64_t capacity = 0;  // bytes allocated
  uint64_t size = 0;      // bytes in use
  uint64_t charged = 0;   // what Give returns to the budget
  bool filling = false;   // a TakeFill buffer not yet handed to FillSent
  std::span<std::byte> bytes() const { return {data.get(), static_cast<size_t>(size)}; }
};

// Bytes of part buffers in flight, shared by the writers of a mount. Buffers
// given back are kept for reuse (within the capacity, counting those in use):
// fresh memory costs a page fault per page (and, in VMs that return free
// pages to the host, a host fault too), which at upload rates is a large
// share of the daemon's CPU.
class PartBufferBudget {
 public:
  explicit PartBufferBudget(uint64_t bytes, std::shared_ptr<SpareMemory> spare = nullptr)
      : capacity_(bytes), spare_(std::move(spare)) {}
  // Blocks until `bytes` (capped at half the capacity, so one part always
  // fits beside the fill buffers) are available; returns what was taken, to
  // give back with Release.
  uint64_t Acquire(uint64_t bytes);
  void Release(uint64_t bytes);
  // Acquire(bytes) plus a buffer of that size, reused when one is free (then
  // `charged` is the kept buffer's whole capacity).
  PartBuffer Take(uint64_t bytes);
  // A buffer for a part a writer fills in memory, held until the part is
  // sent (or the file closed): nullopt when fill buffers would pass half the
  // capacity (or the part is over a quarter of it), else as Take. Fill
  // buffers never exceed half the capacity, so Take, which asks for at most
  // the other half, only ever waits for uploads to end, never for a writer.
  std::optional<PartBuffer> TakeFill(uint64_t bytes);
  // The part of a TakeFill buffer is being sent: it no longer counts as a fill.
  void FillSent(PartBuffer& buffer);
  void Give(PartBuffer buffer);
  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;  // charged to buffers not yet given back
  uint64_t peak() const;

 private:
  // A buffer for `b` (charged already), reused when a kept one fits.
  void Provide(PartBuffer& b);

  const uint64_t capacity_;
  const std::shared_ptr<SpareMemory> spare_;  // may be null: keeps its own
  mutable Mutex mu_;
  CondVar cv_;
  uint64_t used_ GUARDED_BY(mu_) = 0;
  uint64_t fill_bytes_ GUARDED_BY(mu_) = 0;  // charged to TakeFill buffers
  uint64_t peak_ GUARDED_BY(mu_) = 0;
  std::vector<PartBuffer> free_ GUARDED_BY(mu_);  // kept for reuse
  uint64_t free_bytes_ GUARDED_BY(mu_) = 0;       // capacity of free_
};

}  // namespace bucketfs::memory
