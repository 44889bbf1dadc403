#include "prefetch/buffer_pool.h"

#include <utility>

namespace bucketfs::prefetch {

BufferPool::BufferPool(uint64_t buffer_size, size_t max_buffers)
    : buffer_size_(buffer_size), max_buffers_(max_buffers) {}

std::unique_ptr<std::byte[]> BufferPool::Get(uint64_t size) {
  if (size == buffer_size_) {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      auto b = std::move(free_.back());
      free_.pop_back();
      ++reuses_;
      return b;
    }
  }
  // Uninitialised on purpose: the fetch overwrites every byte.
  return std::make_unique_for_overwrite<std::byte[]>(size);
}

void BufferPool::Put(std::unique_ptr<std::byte[]> buffer, uint64_t size) {
  if (!buffer || size != buffer_size_) return;
  std::unique_lock lock(mu_);
  if (free_.size() < max_buffers_) free_.push_back(std::move(buffer));
  lock.unlock();
  // `buffer`, when not kept, is freed here without the lock.
}

uint64_t BufferPool::reuses() const {
  std::lock_guard lock(mu_);
  return reuses_;
}

size_t BufferPool::pooled() const {
  std::lock_guard lock(mu_);
  return free_.size();
}

}  // namespace bucketfs::prefetch
