#include "prefetch/fetch_context.h"

#include <utility>

namespace bucketfs::prefetch::internal {

void FetchTracker::Begin(uint64_t bytes) {
  std::lock_guard lock(mu_);
  ++in_flight_;
  ++fetches_;
  bytes_ += bytes;
}

void FetchTracker::End() {
  std::lock_guard lock(mu_);
  if (--in_flight_ == 0) idle_.notify_all();
}

void FetchTracker::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

uint64_t FetchTracker::in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

uint64_t FetchTracker::total_fetches() const {
  std::lock_guard lock(mu_);
  return fetches_;
}

uint64_t FetchTracker::total_bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

void IssueFetch(const FetchContext& ctx, const ObjectVersion& object, PartPtr part,
                std::function<void(const PartPtr&, Status)> after) {
  ctx.tracker->Begin(part->size());
  const uint64_t offset = part->offset();
  const std::span<std::byte> dest = part->fetch_buffer();
  ctx.source->FetchAsync(
      object, offset, dest,
      [tracker = ctx.tracker, part = std::move(part), after = std::move(after)](Status s) mutable {
        PartPtr p = std::move(part);
        auto cb = std::move(after);
        cb(p, std::move(s));
        cb = nullptr;  // its captures may own readers and, through them, parts
        p.reset();
        tracker->End();
      });
}

}  // namespace bucketfs::prefetch::internal
