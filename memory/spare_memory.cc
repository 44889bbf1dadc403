// SpareMemory: see spare_memory.h.
#include "memory/spare_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

#include "memory/memory_poison.h"

namespace bucketfs::memory {
namespace {

void Unmap(std::byte* start, uint64_t length) { BufferDeleter{length}(start); }

// A buffer of `length` mapped bytes handed out for `size`: as AllocateBuffer
// leaves one, the slack past `size` poisoned.
Buffer Ready(std::byte* start, uint64_t length, uint64_t size) {
  UnpoisonMemory(start, size);
  PoisonMemory(start + size, length - size);
  return Buffer(start, BufferDeleter{length});
}

}  // namespace

SpareMemory::~SpareMemory() {
  for (const Mapping& m : spare_) Unmap(m.start, m.length);
}

Buffer SpareMemory::Take(uint64_t size) {
  if (size < kHugeBufferBytes) return {};
  const uint64_t length = AllocatedBytes(size);
  std::vector<Mapping> parts;
  {
    MutexLock lock(mu_);
    if (bytes_ < length) return {};
    // The shortest mapping long enough: all of it, or its front.
    auto best = spare_.end();
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
      if (it->length >= length && (best == spare_.end() || it->length < best->length)) best = it;
    }
    bytes_ -= length;
    if (best != spare_.end()) {
      std::byte* const start = best->start;
      if (best->length == length) {
        spare_.erase(best);
      } else {
        best->start += length;
        best->length -= length;
      }
      return Ready(start, length, size);
    }
    // None is: several, moved next to each other (the last one's front).
    for (uint64_t gathered = 0; gathered < length;) {
      Mapping& m = spare_.back();
      const uint64_t use = std::min(m.length, length - gathered);
      parts.push_back({m.start, use});
      if (use == m.length) {
        spare_.pop_back();
      } else {
        m.start += use;
        m.length -= use;
      }
      gathered += use;
    }
    ++joins_;
  }
  Buffer joined = Join(parts, length);
  if (!joined) return {};
  return Ready(joined.release(), length, size);
}

Buffer SpareMemory::Join(const std::vector<Mapping>& parts, uint64_t length) {
  // A reserved range (no memory behind it) the mappings move into.
  std::byte* const target = MapAligned(length, PROT_NONE);
  uint64_t at = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    // ASan's shadow stays at an address, so the old one is cleared first.
    UnpoisonMemory(parts[i].start, parts[i].length);
    void* moved = target == nullptr ? MAP_FAILED
                                    : mremap(parts[i].start, parts[i].length, parts[i].length,
                                             MREMAP_MAYMOVE | MREMAP_FIXED, target + at);
    if (moved == MAP_FAILED) {
      for (size_t j = i; j < parts.size(); ++j) Unmap(parts[j].start, parts[j].length);
      if (target != nullptr) Unmap(target, length);
      return {};
    }
    at += parts[i].length;
  }
  return Buffer(target, BufferDeleter{length});
}

void SpareMemory::Give(Buffer buffer) {
  const uint64_t length = buffer.get_deleter().mapped;
  if (!buffer || length == 0) return;  // not mapped: freed by its deleter
  {
    MutexLock lock(mu_);
    if (bytes_ + length <= max_bytes_) {
      PoisonMemory(buffer.get(), length);  // see memory/memory_poison.h
      spare_.push_back({buffer.release(), length});
      bytes_ += length;
      return;
    }
  }
  // `buffer` is freed here, without the lock.
}

uint64_t SpareMemory::bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

uint64_t SpareMemory::joins() const {
  MutexLock lock(mu_);
  return joins_;
}

}  // namespace bucketfs::memory
