#include "prefetch/part.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch {

Part::Part(uint64_t offset, uint64_t size, std::shared_ptr<memory::MemoryBudget> budget,
           std::shared_ptr<memory::BufferPool> pool)
    : offset_(offset),
      size_(size),
      held_(HeldBytes(size, pool.get())),
      budget_(std::move(budget)),
      pool_(std::move(pool)),
      data_(pool_ ? pool_->Get(size) : memory::AllocateBuffer(size)),
      coverage_(size) {}

Part::~Part() {
  if (waste_ && !served_.load(std::memory_order_relaxed) && ready()) {
    waste_->fetch_add(size_, std::memory_order_relaxed);
  }
  if (pool_) pool_->Put(std::move(data_), size_);
  if (budget_) budget_->Release(held_);
}

bool Part::done() const {
  MutexLock lock(mu_);
  return done_;
}

bool Part::ready() const {
  MutexLock lock(mu_);
  return done_ && status_.ok();
}

bool Part::failed() const {
  MutexLock lock(mu_);
  return done_ && !status_.ok();
}

Status Part::status() const {
  MutexLock lock(mu_);
  return status_;
}

void Part::OnDone(std::function<void()> fn) {
  {
    MutexLock lock(mu_);
    if (!done_) {
      waiters_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Part::Complete(Status s) {
  std::vector<std::function<void()>> waiters;
  {
    MutexLock lock(mu_);
    done_ = true;
    status_ = std::move(s);
    waiters.swap(waiters_);
  }
  for (auto& w : waiters) w();
}

size_t ReadData::CopyTo(std::span<std::byte> out) const {
  size_t copied = 0;
  for (const auto& seg : segments_) {
    if (copied == out.size()) break;
    const size_t n = std::min(seg.size(), out.size() - copied);
    std::memcpy(out.data() + copied, seg.data(), n);
    copied += n;
  }
  return copied;
}

bool CoverRange(const PartsByOffset& parts, uint64_t o, uint64_t e,
                std::vector<PartPtr>* covering) {
  auto it = parts.upper_bound(o);
  if (it == parts.begin()) return false;
  --it;
  const size_t kept = covering ? covering->size() : 0;
  uint64_t pos = o;
  for (; it != parts.end() && pos < e; ++it) {
    if (!it->second->Contains(pos)) break;
    if (covering) covering->push_back(it->second);
    pos = it->second->end();
  }
  if (pos >= e) return true;
  if (covering) covering->resize(kept);
  return false;
}

}  // namespace bucketfs::prefetch
