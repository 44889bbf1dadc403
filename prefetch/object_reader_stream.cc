// ObjectReader, sequential mode: the stream of parts ahead of the reader, its
// window, and the release of parts behind it.
#include <algorithm>
#include <iterator>

#include "prefetch/object_reader.h"

namespace bucketfs::prefetch {

void ObjectReader::PlanSequential(uint64_t o, uint64_t e, Plan& plan) {
  const uint64_t low =
      stream_pos_ > cfg_.backward_tolerance ? stream_pos_ - cfg_.backward_tolerance : 0;
  const uint64_t high = std::max(frontier_, stream_pos_) + cfg_.max_forward_skip;
  const bool continues = o >= last_end_ && o - last_end_ <= cfg_.random_floor;
  last_end_ = e;
  if (o < low || o > high) {
    if (++outside_ < kSeekAfterOutsideReads) {
      // One read far from the stream (a lagging or early request from another
      // thread, or the first read after a seek): serve it on the side, from
      // the stream's parts when they hold it.
      if (SeqCovers(o, e)) {
        EnsureCovered(o, e, plan);
      } else {
        PlanBlock(o, e, plan);
      }
      return;
    }
    DropStreamAtSeek();
    run_ = continues ? 2 : 1;
    if (run_ >= cfg_.sequential_trigger) {
      StartStream(o);  // the reads outside were themselves sequential
      PlanStreamRead(o, e, plan);
    } else {
      PlanBlock(o, e, plan);
    }
    return;
  }
  outside_ = 0;
  if (o < stream_pos_ && !SeqCovers(o, e)) {
    // A straggler behind the stream whose part is gone: serve it on the side.
    // Stragglers that run on in sequence are the reader itself: the stream's
    // position came from a lone read ahead (a zip's directory at the end of a
    // file, read before its records), and the stream restarts at the run.
    // Only bytes the stream never had count: late READs of the kernel's
    // readahead ask for bytes a part held (now kept) or that were read.
    const bool never_had = !KeptCovering(o, e) && !consumed_.Overlaps(o, e);
    behind_run_ = never_had ? (continues ? behind_run_ + 1 : 1) : 0;
    if (behind_run_ >= kSeekAfterOutsideReads) {
      DropStreamAtSeek();
      StartStream(o);
      PlanStreamRead(o, e, plan);
      return;
    }
    PlanBlock(o, e, plan);
    return;
  }
  behind_run_ = 0;
  PlanStreamRead(o, e, plan);
}

void ObjectReader::DropStreamAtSeek() {
  // A reader that read a long run before jumping (records of a checkpoint or
  // archive read out of file order) will likely read as long a run at the new
  // place: the next stream starts with the window the last one reached, up to
  // the run's length, instead of ramping up from the small first request
  // again. Short runs keep the small start. The stream's parts not wholly
  // read are kept, those in flight too.
  const uint64_t run = read_end_ > stream_from_ ? read_end_ - stream_from_ : 0;
  resume_window_ = std::clamp(std::min(run, window_), cfg_.initial_window,
                              std::max(cfg_.initial_window, WindowCap()));
  LeaveStream();
  for (auto& [offset, part] : seq_parts_) Keep(std::move(part));
  seq_parts_.clear();
  window_ = cfg_.initial_window;
  ++stats_.seeks;
  outside_ = 0;
  behind_run_ = 0;
}

void ObjectReader::PlanStreamRead(uint64_t o, uint64_t e, Plan& plan) {
  stream_pos_ = std::max(stream_pos_, o);
  read_end_ = std::max(read_end_, e);
  ReleaseBehind();
  EnsureCovered(o, e, plan);
  // The window doubles whenever a read waits for its bytes (GrowOnWait);
  // otherwise at most once per half window read, and with
  // grow_only_when_reads_wait only up to two parts (the small first requests
  // only serve the first read quickly; parts of full size keep GETs few and
  // buffers pooled). A window already ahead of the reader gains nothing by
  // growing: it only holds more memory, which every stream would grow to.
  for (const auto& p : plan.needed) {
    if (!p->done()) {
      starved_ = true;
      break;
    }
  }
  const uint64_t cap = WindowCap();
  if (cfg_.grow_only_when_reads_wait && starved_) {
    GrowOnWait();
  } else {
    const bool may_grow = !cfg_.grow_only_when_reads_wait || window_ < 2 * cfg_.part_size;
    if (may_grow && stream_pos_ >= next_grow_ && window_ < cap) {
      window_ = std::min(window_ * 2, cap);
      next_grow_ = stream_pos_ + window_ / 2;
    }
  }
  ReleaseConsumed(o, e, plan.needed);
  FillWindow(plan.to_fetch, nullptr);
}

void ObjectReader::GrowOnWait() {
  // A read waits for bytes in flight: the store, not the reader, sets the
  // pace, so more parts in flight help at once. Doubling on every such read
  // and every completion reaches full depth within a round trip or two of the
  // small first parts, instead of one doubling per half window read.
  window_ = std::min(window_ * 2, WindowCap());
  next_grow_ = stream_pos_ + window_ / 2;
  starved_ = false;
}

void ObjectReader::ReleaseConsumed(uint64_t o, uint64_t e, const std::vector<PartPtr>& needed) {
  for (const auto& p : needed) {
    const uint64_t from = std::max(o, p->offset()) - p->offset();
    const uint64_t to = std::min(e, p->end()) - p->offset();
    if (!p->coverage().Add(from, to)) continue;
    // Every page was asked for: no later READ needs this part. The read being
    // planned pins it until its reply is sent.
    auto it = seq_parts_.find(p->offset());
    if (it != seq_parts_.end() && it->second == p) {
      seq_parts_.erase(it);
      consumed_.Add(p->offset(), p->end());
    }
  }
}

void ObjectReader::StartStream(uint64_t from) {
  if (mode_ != Mode::kSequential) ctx_->active_streams.fetch_add(1, std::memory_order_relaxed);
  mode_ = Mode::kSequential;
  for (auto& [offset, part] : seq_parts_) Keep(std::move(part));
  seq_parts_.clear();
  stream_from_ = from;
  stream_pos_ = from;
  read_end_ = from;
  frontier_ = from;
  window_ = std::max(cfg_.initial_window, resume_window_);
  next_grow_ = from + window_ / 2;
  starved_ = false;
  ++stats_.stream_starts;
}

void ObjectReader::LeaveStream() {
  if (mode_ == Mode::kSequential) ctx_->active_streams.fetch_sub(1, std::memory_order_relaxed);
  mode_ = Mode::kRandom;
}

uint64_t ObjectReader::ActiveStreams() const {
  return static_cast<uint64_t>(std::max(ctx_->active_streams.load(std::memory_order_relaxed), 1));
}

uint64_t ObjectReader::WindowCap() const {
  // The bytes in flight that keep the store busy are shared by the streams:
  // each gets max_window / streams, at least two parts. Nor more than the
  // stream's fetches in flight cover: past that, the window can only hold
  // parts already fetched and not yet read, which no read waits for, and
  // when the store is the limit a window grown on waiting alone would hold
  // memory for no speed.
  const uint64_t streams = ActiveStreams();
  const uint64_t reach =
      static_cast<uint64_t>(std::max(cfg_.max_parts_in_flight, 1)) * cfg_.part_size;
  const uint64_t share = std::min(cfg_.max_window / streams, reach);
  return std::min(cfg_.max_window, std::max(share, 2 * cfg_.part_size));
}

uint64_t ObjectReader::AheadCap() const {
  const uint64_t fair = ctx_->budget->limit() / ActiveStreams();
  const uint64_t reserve = cfg_.part_size;  // the part kept behind the reader
  return std::max(fair > reserve ? fair - reserve : 0, cfg_.part_size);
}

void ObjectReader::ReleaseBehind() {
  // Parts that end more than backward_tolerance behind the stream position
  // go, except the last one behind it: the kernel's readahead keeps several
  // READs in flight on different threads, so the furthest read start runs
  // ahead of requests still to come by up to the readahead size, and those
  // late requests must still find their part. With a small budget, what is
  // kept behind must not starve what is ahead: at most a quarter of this
  // stream's share.
  const uint64_t keep =
      std::min(cfg_.backward_tolerance, ctx_->budget->limit() / ActiveStreams() / 4);
  const uint64_t keep_from = stream_pos_ > keep ? stream_pos_ - keep : 0;
  auto it = seq_parts_.begin();
  while (it != seq_parts_.end() && it->second->end() <= keep_from) {
    auto next = std::next(it);
    if (next == seq_parts_.end() || next->second->end() > stream_pos_) break;
    Keep(std::move(it->second));  // kept unless every page of it was read
    it = seq_parts_.erase(it);
  }
}

bool ObjectReader::SeqCovers(uint64_t o, uint64_t e) const { return CoverRange(seq_parts_, o, e); }

uint64_t ObjectReader::StreamPartLen() const {
  return std::max<uint64_t>(std::min(cfg_.part_size, window_), 1);
}

void ObjectReader::EnsureCovered(uint64_t o, uint64_t e, Plan& plan) {
  uint64_t pos = o;
  while (pos < e) {
    auto next = seq_parts_.upper_bound(pos);
    if (next != seq_parts_.begin()) {
      const PartPtr& p = std::prev(next)->second;
      if (p->Contains(pos)) {
        plan.needed.push_back(p);
        pos = p->end();
        continue;
      }
    }
    // A gap at pos (never fetched, skipped over, or dropped after a failure).
    const uint64_t gap_end = next == seq_parts_.end() ? object_.size : next->first;
    const uint64_t gap_start = next == seq_parts_.begin() ? 0 : std::prev(next)->second->end();
    if (PartPtr kept = AdoptKept(pos, gap_start, gap_end)) {
      frontier_ = std::max(frontier_, kept->end());
      plan.needed.push_back(kept);
      pos = kept->end();
      seq_parts_.emplace(kept->offset(), std::move(kept));
      continue;
    }
    // A new part stops where a kept part begins, so that it is adopted next.
    uint64_t len = std::min({StreamPartLen(), gap_end - pos, NextKeptStart(pos + 1) - pos});
    PartPtr p = NewPart(pos, len, /*demand=*/false);
    if (!p) {
      // Budget full: fetch only what this read needs (at least the floor).
      len = std::min(std::max(e - pos, cfg_.random_floor), gap_end - pos);
      p = NewPart(pos, len, /*demand=*/true);
    }
    NoteRereadFetch(o, e, p);
    seq_parts_.emplace(pos, p);
    frontier_ = std::max(frontier_, p->end());
    plan.to_fetch.push_back(p);
    plan.needed.push_back(p);
    pos = p->end();
  }
}

void ObjectReader::FillWindow(std::vector<PartPtr>& to_fetch, const Part* finishing) {
  // The window is the stream's bytes in flight; parts that arrive before
  // older ones still in flight may sit ahead of the reader on top of it, so
  // that an early arrival frees its slot for the next part at once.
  // WindowCap: streams that started since this window grew share it too.
  const uint64_t window = std::min(window_, WindowCap());
  const uint64_t target = std::min(object_.size, read_end_ + window + window / 4);
  const uint64_t cap = AheadCap();
  uint64_t in_flight_bytes = SeqBytesInFlight(finishing);  // parts of to_fetch included
  int in_flight = in_flight_ + static_cast<int>(to_fetch.size());
  while (frontier_ < target && in_flight < cfg_.max_parts_in_flight && in_flight_bytes < window) {
    if (frontier_ - std::min(frontier_, stream_pos_) >= cap) break;  // fair share reached
    // Bytes the reader read already (in the kernel's page cache) are not
    // fetched again for a stream that comes back over them.
    if (const uint64_t read_to = consumed_.EndOfRangeAt(frontier_); read_to > frontier_) {
      frontier_ = std::min(read_to, object_.size);
      continue;
    }
    if (PartPtr kept = AdoptKept(frontier_, frontier_, object_.size)) {
      frontier_ = kept->end();
      seq_parts_.emplace(kept->offset(), std::move(kept));
      continue;
    }
    // A new part stops where kept or read bytes begin.
    const uint64_t stop =
        std::min(NextKeptStart(frontier_ + 1), consumed_.NextStartAfter(frontier_, object_.size));
    const uint64_t len = std::min({StreamPartLen(), object_.size - frontier_, stop - frontier_});
    PartPtr p = NewPart(frontier_, len, /*demand=*/false);
    if (!p) break;  // backpressure: resume on a later read or completion
    seq_parts_.emplace(frontier_, p);
    frontier_ += len;
    in_flight_bytes += len;
    to_fetch.push_back(std::move(p));
    ++in_flight;
  }
}

uint64_t ObjectReader::SeqBytesInFlight(const Part* finishing) const {
  uint64_t bytes = 0;
  for (const auto& [offset, p] : seq_parts_) {
    if (p.get() != finishing && !p->done()) bytes += p->size();
  }
  return bytes;
}

}  // namespace bucketfs::prefetch
