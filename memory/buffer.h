// Buffer: the memory of one part (a prefetched range, a part being uploaded),
// allocated so that faulting it in is cheap.
//
// A part buffer is written once (a fetch's body copied in, a writer's bytes)
// and then read. A fresh malloc'd buffer of several MiB is faulted in 4 KiB
// at a time, which costs a sequential reader or writer much of its CPU, so
// buffers of at least kHugeBufferBytes are mapped directly, 2 MiB aligned,
// with transparent huge pages advised and populated in one call (a handful of
// faults, not thousands).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace bucketfs::memory {

// Frees a part buffer the way AllocateBuffer made it.
struct BufferDeleter {
  size_t mapped = 0;  // length of the mapping; 0: allocated with new[]
  void operator()(std::byte* p) const;
};
using Buffer = std::unique_ptr<std::byte[], BufferDeleter>;

// Buffers at least this large are mapped directly with huge pages advised.
inline constexpr uint64_t kHugeBufferBytes = 2ull << 20;

// A buffer of `size` bytes, contents unspecified (the writer overwrites every
// byte). Never null for size > 0 (throws std::bad_alloc like new[]).
Buffer AllocateBuffer(uint64_t size);

// A 2 MiB aligned anonymous private mapping of `length` bytes (a multiple of
// 2 MiB) with protection `prot` (PROT_NONE: a reserved range); nullptr when
// mmap fails.
std::byte* MapAligned(uint64_t length, int prot);

// The bytes AllocateBuffer(size) holds: `size`, or from kHugeBufferBytes up
// the whole huge pages it maps (populated, so resident).
uint64_t AllocatedBytes(uint64_t size);

}  // namespace bucketfs::memory
