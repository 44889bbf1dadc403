// BodyPool: keeps the buffers of large uploaded bodies (objects and parts)
// once nothing holds them any more, and hands them to the next large upload.
//
// Why: fresh memory must be zeroed by the kernel (and on a VM that returns
// free memory to its host, faulted in again), which would make a write
// benchmark measure which client got recently freed memory on the server.
// Recycled buffers stay resident, so an upload after a delete or overwrite
// costs the copy out of the socket and nothing more.
//
// Buffers below kMinPooled bytes go through malloc as before. The pool holds
// at most `capacity` bytes; a buffer that does not fit is freed.
// Thread-safe.
#ifndef TESTS_S3SIM_BODY_POOL_H_
#define TESTS_S3SIM_BODY_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "base/mutex.h"
#include "tests/s3sim/body.h"

namespace s3sim {

class BodyPool {
 public:
  static constexpr size_t kMinPooled = 1 << 20;
  static constexpr uint64_t kDefaultCapacity = 2ULL << 30;

  explicit BodyPool(uint64_t capacity) : capacity_(capacity) {}
  BodyPool(const BodyPool&) = delete;
  BodyPool& operator=(const BodyPool&) = delete;

  // The process-wide pool (never destroyed, so buffers may outlive main's
  // objects in any order).
  static BodyPool& Default();

  void SetCapacity(uint64_t bytes);

  // A string of `n` bytes whose contents the caller overwrites: a kept
  // buffer of capacity n..2n when there is one, else a new one.
  std::string Take(size_t n);
  // Keeps the buffer of `s` for a later Take when it is large enough and
  // fits; frees it otherwise.
  void Give(std::string s);
  // `bytes` as an immutable shared buffer whose memory comes back here when
  // its last holder lets go. REQUIRES: the pool outlives the buffer.
  BufferPtr Share(std::string bytes);

  uint64_t pooled_bytes() const;
  uint64_t reuses() const;

 private:
  mutable bucketfs::Mutex mu_;
  uint64_t capacity_ GUARDED_BY(mu_);
  uint64_t pooled_ GUARDED_BY(mu_) = 0;  // capacity of the kept buffers
  uint64_t reuses_ GUARDED_BY(mu_) = 0;
  std::multimap<size_t, std::string> free_ GUARDED_BY(mu_);  // by capacity
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_BODY_POOL_H_
