#include "memory/buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

#include "memory/memory_poison.h"

namespace bucketfs::memory {
namespace {

constexpr uintptr_t kHugePage = 2u << 20;

uintptr_t RoundUp(uintptr_t v, uintptr_t to) { return (v + to - 1) / to * to; }

}  // namespace

void BufferDeleter::operator()(std::byte* p) const {
  if (p == nullptr) return;
  if (mapped == 0) {
    delete[] p;
  } else {
    UnpoisonMemory(p, mapped);  // see memory/memory_poison.h
    munmap(p, mapped);
  }
}

uint64_t AllocatedBytes(uint64_t size) {
  return size < kHugeBufferBytes ? size : RoundUp(size, kHugePage);
}

std::byte* MapAligned(uint64_t length, int prot) {
  // Over-map by one huge page, then trim to a 2 MiB aligned range so that
  // every 2 MiB of it can be one huge page.
  const size_t over = length + kHugePage;
  void* raw = mmap(nullptr, over, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t head = RoundUp(start, kHugePage) - start;
  if (head > 0) munmap(raw, head);
  std::byte* const p = static_cast<std::byte*>(raw) + head;
  const uintptr_t tail = over - head - length;
  if (tail > 0) munmap(p + length, tail);
  return p;
}

Buffer AllocateBuffer(uint64_t size) {
  if (size < kHugeBufferBytes) {
    // Uninitialised on purpose: the writer overwrites every byte.
    return Buffer(new std::byte[size], BufferDeleter{0});
  }
  const size_t len = RoundUp(size, kHugePage);
  std::byte* const p = MapAligned(len, PROT_READ | PROT_WRITE);
  if (p == nullptr) throw std::bad_alloc();
  // Both are hints: without huge pages (or on an old kernel) the buffer still
  // works, it just faults in 4 KiB pages as the body lands.
  madvise(p, len, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  madvise(p, len, MADV_POPULATE_WRITE);
#endif
  PoisonMemory(p + size, len - size);  // the rounding slack is not the buffer's
  return Buffer(p, BufferDeleter{len});
}

}  // namespace bucketfs::memory
