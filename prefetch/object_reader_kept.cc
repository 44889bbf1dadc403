// ObjectReader, kept parts: parts a stream fetched and then left before every
// page of them was read, kept for a reader that comes back to them.
#include <algorithm>
#include <iterator>

#include "prefetch/object_reader.h"

namespace bucketfs::prefetch {

uint64_t ObjectReader::KeptCap() const {
  // Kept parts hold the budget like parts ahead of the reader, so they share
  // this stream's fair part of it; no stream keeps more than half the budget.
  return std::min(AheadCap(), ctx_->budget->limit() / 2);
}

void ObjectReader::Keep(PartPtr p) {
  if (!p || p->coverage().complete() || p->failed() || closed_) return;
  // Overlapping an older kept part (two streams over the same bytes): the
  // older one stays, so the set never holds a byte twice.
  auto next = kept_.lower_bound(p->offset());
  if (next != kept_.end() && next->first < p->end()) return;
  if (next != kept_.begin() && std::prev(next)->second.part->end() > p->offset()) return;
  kept_bytes_ += p->size();
  const uint64_t offset = p->offset();
  kept_.emplace(offset, KeptPart{std::move(p), kept_count_++});
  const uint64_t cap = KeptCap();
  while (kept_bytes_ > cap && DropOldestKept()) {
  }
}

bool ObjectReader::DropOldestKept() {
  if (kept_.empty()) return false;
  auto oldest = kept_.begin();
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->second.order < oldest->second.order) oldest = it;
  }
  kept_bytes_ -= oldest->second.part->size();
  kept_.erase(oldest);
  return true;
}

PartPtr ObjectReader::AdoptKept(uint64_t pos, uint64_t from, uint64_t to) {
  auto it = kept_.upper_bound(pos);
  if (it == kept_.begin()) return nullptr;
  --it;
  const PartPtr& p = it->second.part;
  if (!p->Contains(pos) || p->offset() < from || p->end() > to || p->failed()) return nullptr;
  PartPtr adopted = p;
  kept_bytes_ -= adopted->size();
  kept_.erase(it);
  ++stats_.kept_reused;
  return adopted;
}

uint64_t ObjectReader::NextKeptStart(uint64_t pos) const {
  auto it = kept_.lower_bound(pos);
  return it == kept_.end() ? object_.size : it->first;
}

PartPtr ObjectReader::KeptCovering(uint64_t o, uint64_t e) const {
  auto it = kept_.upper_bound(o);
  if (it == kept_.begin()) return nullptr;
  --it;
  const PartPtr& p = it->second.part;
  if (p->offset() > o || p->end() < e || p->failed()) return nullptr;
  return p;
}

}  // namespace bucketfs::prefetch
