#include "prefetch/held_object.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch::internal {

HeldObject::HeldObject(std::shared_ptr<const FetchContext> ctx, ObjectVersion object)
    : ctx_(std::move(ctx)), object_(std::move(object)) {}

std::vector<PartPtr> HeldObject::Cover(uint64_t o, uint64_t e) const {
  std::vector<PartPtr> parts;
  MutexLock lock(mu_);
  CoverRange(parts_, o, e, &parts);
  return parts;
}

void HeldObject::Fill() {
  const PrefetchConfig& cfg = ctx_->config;
  const uint64_t part_size = std::max<uint64_t>(cfg.part_size, 1);
  std::vector<PartPtr> to_fetch;
  {
    MutexLock lock(mu_);
    while (frontier_ < object_.size && in_flight_ < cfg.max_parts_in_flight) {
      const uint64_t len = std::min(part_size, object_.size - frontier_);
      if (!ctx_->budget->TryReserve(Part::HeldBytes(len, ctx_->pool.get()))) break;
      auto part = std::make_shared<Part>(frontier_, len, ctx_->budget, ctx_->pool);
      part->CountWasteIn(ctx_->wasted_bytes);
      parts_.emplace(frontier_, part);
      frontier_ += len;
      ++in_flight_;
      to_fetch.push_back(std::move(part));
    }
  }
  for (auto& part : to_fetch) {
    // The completion holds the held object weakly: once its last reader has
    // gone, a part still in flight is dropped when its fetch ends.
    IssueFetch(*ctx_, object_, std::move(part),
               [self = weak_from_this()](const PartPtr& p, Status s) {
                 auto held = self.lock();
                 const bool ok = s.ok();
                 if (held) held->Finished(p, ok);
                 p->Complete(std::move(s));
                 if (held && ok) held->Fill();
               });
  }
}

void HeldObject::Finished(const PartPtr& part, bool ok) {
  PartPtr failed;  // released outside the lock
  MutexLock lock(mu_);
  --in_flight_;
  if (ok) return;
  auto it = parts_.find(part->offset());
  if (it != parts_.end() && it->second == part) {
    failed = std::move(it->second);
    parts_.erase(it);
  }
}

std::shared_ptr<HeldObject> HeldObjects::Find(const ObjectVersion& object) {
  MutexLock lock(mu_);
  auto it = objects_.find(VersionKey(object));
  return it == objects_.end() ? nullptr : it->second.lock();
}

std::shared_ptr<HeldObject> HeldObjects::Get(const std::shared_ptr<const FetchContext>& ctx,
                                             const ObjectVersion& object) {
  MutexLock lock(mu_);
  std::erase_if(objects_, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<HeldObject>& slot = objects_[VersionKey(object)];
  if (auto held = slot.lock()) return held;
  auto held = std::make_shared<HeldObject>(ctx, object);
  slot = held;
  return held;
}

}  // namespace bucketfs::prefetch::internal
