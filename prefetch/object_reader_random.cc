// ObjectReader, random mode: reads after a seek served by recent blocks, and
// the run of sequential reads that starts a stream again.
#include <algorithm>

#include "prefetch/object_reader.h"

namespace bucketfs::prefetch {

void ObjectReader::PlanRandom(uint64_t o, uint64_t e, Plan& plan) {
  if (!any_read_ && o == 0) {
    StartStream(0);
    PlanStreamRead(o, e, plan);
    return;
  }
  const bool continues = any_read_ && o >= last_end_ && o - last_end_ <= cfg_.random_floor;
  run_ = continues ? run_ + 1 : 1;
  last_end_ = e;
  if (run_ < cfg_.sequential_trigger) {
    PlanBlock(o, e, plan);
    return;
  }
  // A sequential run again: restart the stream. When a cached block already
  // holds this read, serve from it and start the stream right after it.
  for (const auto& b : blocks_) {
    if (b->offset() <= o && e <= b->end() && !b->failed()) {
      StartStream(b->end());
      plan.needed.push_back(b);
      read_end_ = e;
      FillWindow(plan.to_fetch, nullptr);
      return;
    }
  }
  StartStream(o);
  PlanStreamRead(o, e, plan);
}

void ObjectReader::PlanBlock(uint64_t o, uint64_t e, Plan& plan) {
  // Noted for hits too: a read served again from a recent block is locality.
  const RandomLocality::Range fetch = locality_.NoteRead(o, e, object_.size);
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    const PartPtr b = *it;
    if (b->offset() <= o && e <= b->end() && !b->failed()) {
      blocks_.erase(it);
      blocks_.push_front(b);
      plan.needed.push_back(b);
      return;
    }
  }
  if (PartPtr kept = KeptCovering(o, e)) {
    plan.needed.push_back(std::move(kept));
    return;
  }
  PartPtr b = NewPart(fetch.start, fetch.end - fetch.start, /*demand=*/true);
  NoteRereadFetch(o, e, b);
  blocks_.push_front(b);
  while (blocks_.size() > static_cast<size_t>(std::max(cfg_.random_cache_blocks, 1))) {
    blocks_.pop_back();
  }
  plan.to_fetch.push_back(b);
  plan.needed.push_back(std::move(b));
  NoteRandomFetch(plan);
  // Only a block that is this read's one fetch may be fetched on its thread.
  plan.for_caller = plan.to_fetch.size() == 1;
}

}  // namespace bucketfs::prefetch
