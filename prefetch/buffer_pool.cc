#include "prefetch/buffer_pool.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "s3/memory_poison.h"

namespace bucketfs::prefetch {
namespace {

constexpr uintptr_t kHugePage = 2u << 20;

uintptr_t RoundUp(uintptr_t v, uintptr_t to) { return (v + to - 1) / to * to; }

}  // namespace

void BufferDeleter::operator()(std::byte* p) const {
  if (p == nullptr) return;
  if (mapped == 0) {
    delete[] p;
  } else {
    UnpoisonMemory(p, mapped);  // see s3/memory_poison.h
    munmap(p, mapped);
  }
}

uint64_t AllocatedBytes(uint64_t size) {
  return size < kHugeBufferBytes ? size : RoundUp(size, kHugePage);
}

Buffer AllocateBuffer(uint64_t size) {
  if (size < kHugeBufferBytes) {
    // Uninitialised on purpose: the fetch overwrites every byte.
    return Buffer(new std::byte[size], BufferDeleter{0});
  }
  // Over-map by one huge page, then trim to a 2 MiB aligned range so that
  // every 2 MiB of the buffer can be one huge page.
  const size_t len = RoundUp(size, kHugePage);
  const size_t over = len + kHugePage;
  void* raw = mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start, kHugePage);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = start + over - (aligned + len);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + len), tail);
  auto* p = reinterpret_cast<std::byte*>(aligned);
  // Both are hints: without huge pages (or on an old kernel) the buffer still
  // works, it just faults in 4 KiB pages as the body lands.
  madvise(p, len, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  madvise(p, len, MADV_POPULATE_WRITE);
#endif
  PoisonMemory(p + size, len - size);  // the rounding slack is not the buffer's
  return Buffer(p, BufferDeleter{len});
}

BufferPool::BufferPool(uint64_t buffer_size, size_t max_buffers)
    : buffer_size_(buffer_size), max_buffers_(max_buffers) {}

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
  if (!Pooled(size)) return AllocateBuffer(size);
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
  auto b = AllocateBuffer(buffer_size_);
  PoisonMemory(b.get() + size, buffer_size_ - size);
  return b;
}

void BufferPool::Put(Buffer buffer, uint64_t size) {
  if (!buffer || !Pooled(size)) return;
  MutexLock lock(mu_);
  if (free_.size() < max_buffers_) {
    PoisonMemory(buffer.get(), buffer_size_);  // a stale pointer's access is reported
    free_.push_back(std::move(buffer));
  }
  lock.Unlock();
  // `buffer`, when not kept, is freed here without the lock.
}

uint64_t BufferPool::reuses() const {
  MutexLock lock(mu_);
  return reuses_;
}

size_t BufferPool::pooled() const {
  MutexLock lock(mu_);
  return free_.size();
}

}  // namespace bucketfs::prefetch
