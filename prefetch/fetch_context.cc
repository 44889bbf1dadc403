#include "prefetch/fetch_context.h"

#include <string>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch::internal {

std::string VersionKey(const ObjectVersion& o) {
  std::string k;
  k.reserve(o.bucket.size() + o.key.size() + o.etag.size() + 24);
  k.append(o.bucket).push_back('\0');
  k.append(o.key).push_back('\0');
  k.append(o.etag).push_back('\0');
  k.append(std::to_string(o.size));
  return k;
}

void FetchTracker::Begin(uint64_t bytes) {
  MutexLock lock(mu_);
  ++in_flight_;
  ++fetches_;
  bytes_ += bytes;
}

void FetchTracker::End() {
  MutexLock lock(mu_);
  if (--in_flight_ == 0) idle_.NotifyAll();
}

void FetchTracker::WaitIdle() {
  MutexLock lock(mu_);
  while (!(in_flight_ == 0)) idle_.Wait(mu_);
}

uint64_t FetchTracker::in_flight() const {
  MutexLock lock(mu_);
  return in_flight_;
}

uint64_t FetchTracker::total_fetches() const {
  MutexLock lock(mu_);
  return fetches_;
}

uint64_t FetchTracker::total_bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

void IssueFetch(const FetchContext& ctx, const ObjectVersion& object, PartPtr part,
                std::function<void(const PartPtr&, Status)> after, bool for_caller) {
  ctx.tracker->Begin(part->size());
  const uint64_t offset = part->offset();
  const std::span<std::byte> dest = part->fetch_buffer();
  bool on_caller = false;
  if (for_caller && ctx.config.max_fetches_on_caller > 0) {
    on_caller =
        ctx.on_caller.fetch_add(1, std::memory_order_relaxed) < ctx.config.max_fetches_on_caller;
    if (!on_caller) ctx.on_caller.fetch_sub(1, std::memory_order_relaxed);
  }
  // `ctx` outlives a fetch on the caller: `after` holds the context.
  auto finish = [&ctx, on_caller, tracker = ctx.tracker, part = std::move(part),
                 after = std::move(after)](Status s) mutable {
    PartPtr p = std::move(part);
    auto cb = std::move(after);
    if (on_caller) ctx.on_caller.fetch_sub(1, std::memory_order_relaxed);
    cb(p, std::move(s));
    cb = nullptr;  // its captures may own readers and, through them, parts
    p.reset();
    tracker->End();
  };
  if (on_caller) {
    ctx.source->FetchForCaller(object, offset, dest, std::move(finish));
  } else {
    ctx.source->FetchAsync(object, offset, dest, std::move(finish));
  }
}

}  // namespace bucketfs::prefetch::internal
