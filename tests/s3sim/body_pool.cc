#include "tests/s3sim/body_pool.h"

#include <utility>

#include "tests/s3sim/util.h"

namespace s3sim {

BodyPool& BodyPool::Default() {
  static auto* pool = new BodyPool(kDefaultCapacity);
  return *pool;
}

void BodyPool::SetCapacity(uint64_t bytes) {
  std::multimap<size_t, std::string> dropped;  // freed outside the lock
  bucketfs::MutexLock lock(mu_);
  capacity_ = bytes;
  while (pooled_ > capacity_ && !free_.empty()) {
    auto largest = std::prev(free_.end());
    pooled_ -= largest->first;
    dropped.insert(free_.extract(largest));
  }
}

std::string BodyPool::Take(size_t n) {
  std::string s;
  if (n >= kMinPooled) {
    bucketfs::MutexLock lock(mu_);
    auto it = free_.lower_bound(n);
    // A much larger buffer stays for the large upload it suits.
    if (it != free_.end() && it->first / 2 <= n) {
      pooled_ -= it->first;
      ++reuses_;
      s = std::move(free_.extract(it).mapped());
    }
  }
  if (s.capacity() >= n) {
    s.resize(n);  // zero-fills memory that is already resident
  } else {
    ResizeLargeBuffer(s, n);
  }
  return s;
}

void BodyPool::Give(std::string s) {
  const size_t cap = s.capacity();
  if (cap < kMinPooled) return;
  bucketfs::MutexLock lock(mu_);
  if (pooled_ + cap > capacity_) return;  // s is freed after the lock is released
  s.clear();
  pooled_ += cap;
  free_.emplace(cap, std::move(s));
}

BufferPtr BodyPool::Share(std::string bytes) {
  return BufferPtr(new std::string(std::move(bytes)), [this](const std::string* p) {
    Give(std::move(*const_cast<std::string*>(p)));
    delete p;
  });
}

uint64_t BodyPool::pooled_bytes() const {
  bucketfs::MutexLock lock(mu_);
  return pooled_;
}

uint64_t BodyPool::reuses() const {
  bucketfs::MutexLock lock(mu_);
  return reuses_;
}

}  // namespace s3sim
