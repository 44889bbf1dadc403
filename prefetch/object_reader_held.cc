// ObjectReader: the whole object held for a reader whose random reads keep
// missing. Each such read costs a round trip; once they number as many as the
// GETs of the whole object, fetching it in parallel parts costs no more
// requests than the reader has already sent, and every later read is served
// from memory.
#include <algorithm>

#include "prefetch/object_reader.h"

namespace bucketfs::prefetch {

bool ObjectReader::PlanHeld(uint64_t o, uint64_t e, Plan& plan) {
  if (!holding_) return false;
  // Resumes a fill the budget or the in-flight cap held back.
  FillHeld(plan.to_fetch);
  auto it = held_.upper_bound(o);
  if (it == held_.begin()) return false;
  --it;
  std::vector<PartPtr> parts;
  uint64_t pos = o;
  for (; it != held_.end() && pos < e; ++it) {
    if (!it->second->Contains(pos)) return false;  // a gap: not yet scheduled, or failed
    parts.push_back(it->second);
    pos = it->second->end();
  }
  if (pos < e) return false;
  plan.needed.insert(plan.needed.end(), parts.begin(), parts.end());
  return true;
}

void ObjectReader::NoteRandomFetch(std::vector<PartPtr>& to_fetch) {
  if (mode_ != Mode::kRandom || holding_) return;
  ++random_fetches_;
  if (cfg_.random_whole_max == 0 || object_.size > cfg_.random_whole_max) return;
  const uint64_t limit = ctx_->budget->limit();
  // One file holds at most a quarter of the budget, and holding starts only
  // while half of it is free, so that streams keep their room.
  if (object_.size > limit / 4 || ctx_->budget->used() + object_.size > limit / 2) return;
  const uint64_t part = std::max<uint64_t>(cfg_.part_size, 1);
  const uint64_t gets = (object_.size + part - 1) / part;
  if (random_fetches_ < std::max<uint64_t>(gets, std::max(cfg_.random_whole_min_fetches, 1))) {
    return;
  }
  holding_ = true;
  FillHeld(to_fetch);
}

void ObjectReader::FillHeld(std::vector<PartPtr>& to_fetch) {
  const uint64_t part = std::max<uint64_t>(cfg_.part_size, 1);
  int in_flight = in_flight_ + static_cast<int>(to_fetch.size());
  while (held_frontier_ < object_.size && in_flight < cfg_.max_parts_in_flight) {
    const uint64_t len = std::min(part, object_.size - held_frontier_);
    PartPtr p = NewPart(held_frontier_, len, /*demand=*/false);
    if (!p) break;  // the budget is full: resume on a later read or completion
    held_.emplace(held_frontier_, p);
    held_frontier_ += len;
    to_fetch.push_back(std::move(p));
    ++in_flight;
  }
}

}  // namespace bucketfs::prefetch
