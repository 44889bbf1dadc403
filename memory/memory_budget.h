// MemoryBudget: a byte budget that never blocks, for the read path: one count
// of the bytes held by every prefetch buffer of the mount, against one limit
// (the write path, whose writers wait for room, uses PartBufferBudget,
// memory/part_buffer_budget.h). Speculative fetching (the window ahead of a
// reader, files hinted ahead of their open) only ever uses TryReserve, which
// refuses rather than exceed the limit: that refusal is the backpressure that
// stops fetching when readers stall, and fetching resumes on their next read
// once buffers are released (consumed parts, closed files).
//
// ForceReserve exists for one case only: the bytes an application is waiting
// for right now, when the budget is full of other readers' data. It is bounded
// by the requests in flight (FUSE threads x request size) and keeps a reader
// from ever deadlocking on the budget; forced bytes are counted separately.
//
// Thread-safe; lock-free counters.
#pragma once

#include <atomic>
#include <cstdint>

namespace bucketfs::memory {

class MemoryBudget {
 public:
  // REQUIRES: limit_bytes > 0
  explicit MemoryBudget(uint64_t limit_bytes);
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // A quarter of physical RAM, clamped to [256 MiB, 4 GiB].
  static uint64_t DefaultBudgetBytes();
  // The same rule for `memory_bytes` of memory (the mount passes its
  // cgroup's limit when that is lower than RAM).
  static uint64_t DefaultBudgetBytes(uint64_t memory_bytes);
  static constexpr uint64_t kMinDefaultBytes = 256ull << 20;
  static constexpr uint64_t kMaxDefaultBytes = 4ull << 30;

  // Reserves `bytes` if that keeps used() <= limit(); false otherwise.
  [[nodiscard]] bool TryReserve(uint64_t bytes);
  // Reserves `bytes` even past the limit (see the header comment).
  void ForceReserve(uint64_t bytes);
  // REQUIRES: `bytes` were reserved before and not yet released.
  void Release(uint64_t bytes);

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  // Highest used() seen since construction or ResetPeak().
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // Number of TryReserve calls refused (how often backpressure applied).
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }
  // Bytes ever reserved with ForceReserve beyond the limit.
  uint64_t forced_bytes() const { return forced_.load(std::memory_order_relaxed); }
  void ResetPeak() { peak_.store(used(), std::memory_order_relaxed); }

 private:
  void NotePeak(uint64_t now);

  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> refusals_{0};
  std::atomic<uint64_t> forced_{0};
};

}  // namespace bucketfs::memory
