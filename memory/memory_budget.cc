#include "memory/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>

namespace bucketfs::memory {

MemoryBudget::MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) { assert(limit_bytes > 0); }

uint64_t MemoryBudget::DefaultBudgetBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return kMinDefaultBytes;
  return DefaultBudgetBytes(static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size));
}

uint64_t MemoryBudget::DefaultBudgetBytes(uint64_t memory_bytes) {
  return std::clamp<uint64_t>(memory_bytes / 4, kMinDefaultBytes, kMaxDefaultBytes);
}

bool MemoryBudget::TryReserve(uint64_t bytes) {
  uint64_t cur = used_.load(std::memory_order_relaxed);
  do {
    if (cur + bytes > limit_) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!used_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  NotePeak(cur + bytes);
  return true;
}

void MemoryBudget::ForceReserve(uint64_t bytes) {
  const uint64_t now = used_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (now > limit_) forced_.fetch_add(std::min(bytes, now - limit_), std::memory_order_relaxed);
  NotePeak(now);
}

void MemoryBudget::Release(uint64_t bytes) {
  const uint64_t before = used_.fetch_sub(bytes, std::memory_order_relaxed);
  if (before < bytes) std::abort();  // released more than reserved: a bookkeeping bug
}

void MemoryBudget::NotePeak(uint64_t now) {
  uint64_t p = peak_.load(std::memory_order_relaxed);
  while (now > p && !peak_.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}

}  // namespace bucketfs::memory
