#include "prefetch/random_locality.h"

#include <algorithm>

namespace bucketfs::prefetch {

RandomLocality::RandomLocality(uint64_t block, int recent)
    : block_(std::max<uint64_t>(block, 1)), recent_(static_cast<size_t>(std::max(recent, 1))) {}

bool RandomLocality::Near(const Span& s) const {
  for (size_t i = 0; i < filled_; ++i) {
    if (s.first <= recent_[i].last && recent_[i].first <= s.last) return true;
  }
  return false;
}

RandomLocality::Range RandomLocality::NoteRead(uint64_t o, uint64_t e, uint64_t size) {
  const Span span{o / block_, (e - 1) / block_};
  near_history_ = (near_history_ << 1 | (Near(span) ? 1u : 0u)) & ((1u << kWindow) - 1);
  seen_ = std::min(seen_ + 1, kWindow + 1);
  recent_[next_] = span;
  next_ = (next_ + 1) % recent_.size();
  filled_ = std::min(filled_ + 1, recent_.size());

  Range r{o, e};
  if (floor_in_use() || block_ <= kPage) {
    const uint64_t aligned = o - o % block_;
    if (e <= aligned + block_) {  // the read fits one aligned block: fetch that block
      r = {aligned, aligned + block_};
    } else if (e - o < block_) {
      r.end = o + block_;
    }
  } else {
    r = {o - o % kPage, (e + kPage - 1) / kPage * kPage};
  }
  r.end = std::max(std::min(r.end, size), e);
  return r;
}

}  // namespace bucketfs::prefetch
