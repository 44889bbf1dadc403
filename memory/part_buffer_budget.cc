// PartBufferBudget: see part_buffer_budget.h.
#include "memory/part_buffer_budget.h"

#include <algorithm>
#include <utility>

#include "base/mutex.h"
#include "memory/memory_poison.h"

namespace bucketfs::memory {

uint64_t PartBufferBudget::Acquire(uint64_t bytes) {
  bytes = std::min(bytes, std::max<uint64_t>(capacity_ / 2, 1));
  MutexLock lock(mu_);
  while (!(used_ + bytes <= capacity_)) cv_.Wait(mu_);
  used_ += bytes;
  peak_ = std::max(peak_, used_);
  return bytes;
}

void PartBufferBudget::Release(uint64_t bytes) {
  MutexLock lock(mu_);
  used_ -= bytes;
  cv_.NotifyAll();  // under the lock: a woken waiter may be the last user of the budget
}

PartBuffer PartBufferBudget::Take(uint64_t bytes) {
  PartBuffer b;
  b.charged = Acquire(bytes);
  b.size = bytes;
  Provide(b);
  return b;
}

std::optional<PartBuffer> PartBufferBudget::TakeFill(uint64_t bytes) {
  if (bytes == 0 || bytes > capacity_ / 4) return std::nullopt;
  {
    MutexLock lock(mu_);
    while (fill_bytes_ + bytes <= capacity_ / 2 && used_ + bytes > capacity_) cv_.Wait(mu_);
    if (fill_bytes_ + bytes > capacity_ / 2) return std::nullopt;
    used_ += bytes;
    fill_bytes_ += bytes;
    peak_ = std::max(peak_, used_);
  }
  PartBuffer b;
  b.charged = bytes;
  b.size = bytes;
  b.filling = true;
  Provide(b);
  return b;
}

void PartBufferBudget::FillSent(PartBuffer& buffer) {
  if (!buffer.filling) return;
  MutexLock lock(mu_);
  fill_bytes_ -= buffer.charged;
  buffer.filling = false;
}

void PartBufferBudget::Provide(PartBuffer& b) {
  const uint64_t bytes = b.size;
  std::vector<PartBuffer> dropped;  // freed outside the lock
  {
    MutexLock lock(mu_);
    // The smallest free buffer that fits (a mount's parts mostly share one size).
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->capacity < bytes) continue;
      if (best == free_.end() || it->capacity < best->capacity) best = it;
    }
    // It is charged for all it holds (a file's tail in a whole part's
    // buffer): when that does not fit, or would take the fills past half the
    // capacity, a buffer of the part's own size is made instead.
    const uint64_t extra = best != free_.end() ? best->capacity - b.charged : 0;
    if (best != free_.end() &&
        (used_ + extra > capacity_ || (b.filling && fill_bytes_ + extra > capacity_ / 2))) {
      best = free_.end();
    }
    if (best != free_.end()) {
      used_ += extra;
      if (b.filling) fill_bytes_ += extra;
      peak_ = std::max(peak_, used_);
      b.charged += extra;
      b.data = std::move(best->data);
      b.capacity = best->capacity;
      free_bytes_ -= b.capacity;
      free_.erase(best);
      // Past `bytes` stays poisoned: a read beyond the part is reported.
      UnpoisonMemory(b.data.get(), bytes);
      return;
    }
    // A new buffer: kept ones give way so that kept plus used fit the capacity.
    while (!free_.empty() && free_bytes_ + used_ > capacity_) {
      free_bytes_ -= free_.back().capacity;
      dropped.push_back(std::move(free_.back()));
      free_.pop_back();
    }
  }
  if (spare_ != nullptr) b.data = spare_->Take(bytes);
  if (!b.data) b.data = AllocateBuffer(bytes);  // no zeroing: every byte is written
  b.capacity = bytes;
}

void PartBufferBudget::Give(PartBuffer buffer) {
  FillSent(buffer);
  const uint64_t charged = buffer.charged;
  if (spare_ != nullptr) {
    spare_->Give(std::move(buffer.data));
    Release(charged);
    return;
  }
  {
    MutexLock lock(mu_);
    // Keep it while buffers in use plus kept ones stay within the capacity.
    if (buffer.data && used_ - charged + free_bytes_ + buffer.capacity <= capacity_) {
      free_bytes_ += buffer.capacity;
      buffer.charged = 0;
      PoisonMemory(buffer.data.get(), buffer.capacity);  // see memory/memory_poison.h
      free_.push_back(std::move(buffer));
    }
  }
  Release(charged);
}

uint64_t PartBufferBudget::used() const {
  MutexLock lock(mu_);
  return used_;
}

uint64_t PartBufferBudget::peak() const {
  MutexLock lock(mu_);
  return peak_;
}

}  // namespace bucketfs::memory
