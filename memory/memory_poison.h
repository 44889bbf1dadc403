// Pool poisoning for AddressSanitizer builds.
//
// Buffer pools (memory/buffer_pool.h, PartBufferBudget's kept buffers)
// keep freed buffers for reuse, so to ASan a buffer in a pool is live memory:
// a read or write through a stale pointer after the buffer went back to its
// pool would corrupt or leak another part's bytes unseen. Pools poison what
// they hold (and the slack past a buffer's size) so such an access is
// reported like a use after free. Mapped buffers must be unpoisoned before
// munmap: the shadow outlives the mapping and a later mapping at the same
// address would inherit it. Everything here is a no-op without ASan.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define BUCKETFS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUCKETFS_ASAN 1
#endif
#endif

#ifdef BUCKETFS_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace bucketfs::memory {

// True in AddressSanitizer builds (tests of the poisoning skip otherwise).
inline constexpr bool kAsanBuild =
#ifdef BUCKETFS_ASAN
    true;
#else
    false;
#endif

inline void PoisonMemory(const void* p, size_t n) {
#ifdef BUCKETFS_ASAN
  if (p != nullptr && n > 0) __asan_poison_memory_region(p, n);
#else
  (void)p;
  (void)n;
#endif
}

inline void UnpoisonMemory(const void* p, size_t n) {
#ifdef BUCKETFS_ASAN
  if (p != nullptr && n > 0) __asan_unpoison_memory_region(p, n);
#else
  (void)p;
  (void)n;
#endif
}

// Whether ASan would report an access to the byte at `p` (false without ASan).
inline bool IsPoisoned(const void* p) {
#ifdef BUCKETFS_ASAN
  return __asan_address_is_poisoned(p) != 0;
#else
  (void)p;
  return false;
#endif
}

}  // namespace bucketfs::memory
