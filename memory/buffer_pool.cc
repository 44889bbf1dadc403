#include "memory/buffer_pool.h"

#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/memory_poison.h"

namespace bucketfs::memory {

BufferPool::BufferPool(uint64_t buffer_size, size_t max_buffers, std::shared_ptr<SpareMemory> spare)
    : buffer_size_(buffer_size), max_buffers_(max_buffers), spare_(std::move(spare)) {}

bool BufferPool::Pooled(uint64_t size) const {
  if (size == buffer_size_) return true;
  // At most half of a shared buffer goes unused (whole small objects, below
  // 4 MiB, keep buffers of their own size: they are held while a file is open).
  return buffer_size_ >= kHugeBufferBytes && size >= kHugeBufferBytes && size >= buffer_size_ / 2 &&
         size < buffer_size_;
}

uint64_t BufferPool::HeldBytes(uint64_t size) const {
  return AllocatedBytes(Pooled(size) ? buffer_size_ : size);
}

Buffer BufferPool::Get(uint64_t size) {
  if (!Pooled(size)) return Fresh(size);
  {
    MutexLock lock(mu_);
    if (!free_.empty()) {
      auto b = std::move(free_.back());
      free_.pop_back();
      ++reuses_;
      UnpoisonMemory(b.get(), size);  // the rest stays poisoned: not this part's
      return b;
    }
  }
  auto b = Fresh(buffer_size_);
  PoisonMemory(b.get() + size, buffer_size_ - size);
  return b;
}

Buffer BufferPool::Fresh(uint64_t size) {
  if (spare_ != nullptr) {
    if (Buffer b = spare_->Take(size)) return b;
  }
  return AllocateBuffer(size);
}

void BufferPool::Put(Buffer buffer, uint64_t size) {
  if (!buffer) return;
  if (Pooled(size)) {
    MutexLock lock(mu_);
    if (free_.size() < max_buffers_) {
      PoisonMemory(buffer.get(), buffer_size_);  // a stale pointer's access is reported
      free_.push_back(std::move(buffer));
      return;
    }
  }
  if (spare_ != nullptr) spare_->Give(std::move(buffer));
  // `buffer`, when not kept, is freed here without the lock.
}

bool BufferPool::HasSpare() const {
  if (pooled() > 0) return true;
  return spare_ != nullptr && spare_->bytes() >= AllocatedBytes(buffer_size_);
}

uint64_t BufferPool::reuses() const {
  MutexLock lock(mu_);
  return reuses_;
}

size_t BufferPool::pooled() const {
  MutexLock lock(mu_);
  return free_.size();
}

}  // namespace bucketfs::memory
