// Part: one buffer of prefetched bytes [offset, offset + size) of an object,
// filled by exactly one fetch and then immutable. The fetch body lands
// directly in this buffer and reads are served from it (no copy in between);
// whoever needs the bytes holds a shared_ptr, so a buffer lives while a read
// reply still points into it, and its budget reservation is returned the
// moment the last holder lets go.
//
// States: fetching -> ready | failed (terminal). Waiters registered with
// OnDone run exactly once, when the part leaves `fetching` (or at once if it
// already has), outside the part's lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/buffer_pool.h"
#include "memory/memory_budget.h"
#include "prefetch/read_coverage.h"
#include "s3/result.h"

namespace bucketfs::prefetch {

class Part {
 public:
  // Takes over a reservation of HeldBytes(size, pool) bytes already made on
  // `budget`. The buffer comes from `pool` (may be null) and goes back to it.
  Part(uint64_t offset, uint64_t size, std::shared_ptr<memory::MemoryBudget> budget,
       std::shared_ptr<memory::BufferPool> pool = nullptr);
  ~Part();
  Part(const Part&) = delete;
  Part& operator=(const Part&) = delete;

  // What the buffer of a part of `size` bytes from `pool` (may be null)
  // holds, and so what its budget reservation is: more than `size` when the
  // buffer is a larger pooled one or rounded to huge pages.
  static uint64_t HeldBytes(uint64_t size, const memory::BufferPool* pool) {
    return pool ? pool->HeldBytes(size) : memory::AllocatedBytes(size);
  }

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  uint64_t end() const { return offset_ + size_; }
  bool Contains(uint64_t off) const { return off >= offset_ && off < end(); }

  // The buffer the fetch writes into. Only the fetch touches it before Complete.
  std::span<std::byte> fetch_buffer() { return {data_.get(), size_}; }
  // REQUIRES: ready(); [off, off + len) within the part. Counts as served.
  std::span<const std::byte> bytes(uint64_t off, uint64_t len) const {
    // Read first: parts are shared by reader threads, and a store on every
    // read would bounce the line between their cores.
    if (!served_.load(std::memory_order_relaxed)) served_.store(true, std::memory_order_relaxed);
    return {data_.get() + (off - offset_), len};
  }

  // A part fetched whole and dropped before any read took bytes from it adds
  // its size to `counter`: read-ahead the readers never needed.
  void CountWasteIn(std::shared_ptr<std::atomic<uint64_t>> counter) { waste_ = std::move(counter); }

  bool done() const;
  bool ready() const;     // done and ok
  bool failed() const;    // done and not ok
  Status status() const;  // REQUIRES: done()

  // Runs `fn` once the part is done (inline when it already is).
  void OnDone(std::function<void()> fn);
  // Marks the fetch finished and runs the waiters. Called exactly once.
  void Complete(Status s);

  // The pages reads have asked for. Guarded by the lock of the reader that
  // owns the part (not by mu_): only that reader's planning touches it.
  ReadCoverage& coverage() { return coverage_; }

 private:
  const uint64_t offset_;
  const uint64_t size_;
  const uint64_t held_;  // reserved on budget_
  const std::shared_ptr<memory::MemoryBudget> budget_;
  const std::shared_ptr<memory::BufferPool> pool_;
  memory::Buffer data_;
  ReadCoverage coverage_;
  mutable std::atomic<bool> served_{false};
  std::shared_ptr<std::atomic<uint64_t>> waste_;

  mutable Mutex mu_;
  bool done_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
  std::vector<std::function<void()>> waiters_ GUARDED_BY(mu_);
};

using PartPtr = std::shared_ptr<Part>;
// Parts by offset, not overlapping.
using PartsByOffset = std::map<uint64_t, PartPtr>;

// Whether `parts` hold every byte of [o, e) without a gap; when they do and
// `covering` is given, the parts holding them are appended to it in order.
bool CoverRange(const PartsByOffset& parts, uint64_t o, uint64_t e,
                std::vector<PartPtr>* covering = nullptr);

// ReadData: the answer to one read — the bytes as one or more segments that
// point into part buffers, plus the pins that keep those buffers alive. Hand
// the segments to fuse_reply_iov / fuse_reply_buf and drop the ReadData after
// the reply returns: no copy on the way to the kernel.
class ReadData {
 public:
  ReadData() = default;
  void Add(std::span<const std::byte> seg, std::shared_ptr<const void> pin) {
    if (seg.empty()) return;
    segments_.push_back(seg);
    size_ += seg.size();
    pins_.push_back(std::move(pin));
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<std::span<const std::byte>>& segments() const { return segments_; }
  // Copies min(size(), out.size()) bytes into `out`; returns how many.
  size_t CopyTo(std::span<std::byte> out) const;

 private:
  std::vector<std::span<const std::byte>> segments_;
  std::vector<std::shared_ptr<const void>> pins_;
  size_t size_ = 0;
};

}  // namespace bucketfs::prefetch
