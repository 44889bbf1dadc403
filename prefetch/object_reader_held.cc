// ObjectReader: the whole object held for readers whose random reads keep
// missing. Each such read costs a round trip; once they number as many as the
// GETs of the whole object, fetching it in parallel parts costs no more
// requests than the reader has already sent, and every later read is served
// from memory. The held object is shared by every reader of the version.
#include <algorithm>

#include "prefetch/held_object.h"
#include "prefetch/object_reader.h"

namespace bucketfs::prefetch {
namespace {

// Whether an object of `size` may ever be held whole: up to random_whole_max
// and a quarter of the budget (both fixed for the mount).
bool MayBeHeld(const PrefetchConfig& cfg, uint64_t size, uint64_t budget_limit) {
  return cfg.random_whole_max != 0 && size <= cfg.random_whole_max && size <= budget_limit / 4;
}

}  // namespace

bool ObjectReader::PlanHeld(uint64_t o, uint64_t e, Plan& plan) {
  // Another reader of this version may hold it already: use it at once.
  // (Objects that can never be held skip the shared registry's lock.)
  if (!held_ && mode_ == Mode::kRandom && random_fetches_ > 0 &&
      MayBeHeld(cfg_, object_.size, ctx_->budget->limit())) {
    held_ = ctx_->held->Find(object_);
    stats_.holds_whole = held_ != nullptr;
  }
  if (!held_) return false;
  // Resumes a fill the budget or the in-flight cap held back.
  plan.fill = held_;
  std::vector<PartPtr> parts = held_->Cover(o, e);
  if (parts.empty()) return false;
  plan.needed.insert(plan.needed.end(), parts.begin(), parts.end());
  return true;
}

void ObjectReader::NoteRandomFetch(Plan& plan) {
  if (mode_ != Mode::kRandom || held_) return;
  ++random_fetches_;
  const uint64_t limit = ctx_->budget->limit();
  // One object holds at most a quarter of the budget, and holding starts
  // only while half of it is free, so that streams keep their room.
  if (!MayBeHeld(cfg_, object_.size, limit) || ctx_->budget->used() + object_.size > limit / 2) {
    return;
  }
  const uint64_t part = std::max<uint64_t>(cfg_.part_size, 1);
  const uint64_t gets = (object_.size + part - 1) / part;
  const auto least = static_cast<uint64_t>(std::max(cfg_.random_whole_min_fetches, 1));
  if (random_fetches_ < std::max(gets, least)) return;
  held_ = ctx_->held->Get(ctx_, object_);
  stats_.holds_whole = true;
  plan.fill = held_;
}

}  // namespace bucketfs::prefetch
