#include "prefetch/reader_core.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

namespace bucketfs::prefetch::internal {

ReaderCore::ReaderCore(std::shared_ptr<const FetchContext> ctx, ObjectVersion object,
                       PartPtr adopted_whole)
    : ctx_(std::move(ctx)),
      cfg_(ctx_->config),
      object_(std::move(object)),
      mode_(object_.size < cfg_.small_object_threshold ? Mode::kWhole : Mode::kRandom),
      whole_(std::move(adopted_whole)),
      window_(cfg_.initial_window),
      locality_(cfg_.random_floor, cfg_.random_cache_blocks) {}

void ReaderCore::ReadAsync(uint64_t offset, uint64_t size, ReadCallback done) {
  Plan plan;
  uint64_t end = offset;
  bool closed = false;
  {
    std::lock_guard lock(mu_);
    closed = closed_;
    if (!closed && offset < object_.size && size > 0) {
      end = offset + std::min<uint64_t>(size, object_.size - offset);
      switch (mode_) {
        case Mode::kWhole:
          PlanWhole(plan);
          break;
        case Mode::kRandom:
          PlanRandom(offset, end, plan);
          break;
        case Mode::kSequential:
          PlanSequential(offset, end, plan);
          break;
      }
      in_flight_ += static_cast<int>(plan.to_fetch.size());
      any_read_ = true;
      ++stats_.reads;
      for (const auto& p : plan.needed) {
        if (!p->done()) {
          ++stats_.waited_reads;
          break;
        }
      }
    }
  }
  // Callbacks and the source run without mu_ (either may re-enter the reader).
  if (closed) {
    done(MakeError(EBADF, "ReaderClosed", "read after close of " + object_.key));
    return;
  }
  Issue(plan.to_fetch, plan.for_caller);
  Serve(std::move(plan.needed), offset, end, std::move(done));
}

void ReaderCore::PlanWhole(Plan& plan) {
  if (!whole_ || whole_->failed()) {
    whole_ = NewPart(0, object_.size, /*demand=*/true);
    plan.to_fetch.push_back(whole_);
  }
  plan.needed.push_back(whole_);
}

void ReaderCore::PlanRandom(uint64_t o, uint64_t e, Plan& plan) {
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

void ReaderCore::PlanSequential(uint64_t o, uint64_t e, Plan& plan) {
  const uint64_t low =
      stream_pos_ > cfg_.backward_tolerance ? stream_pos_ - cfg_.backward_tolerance : 0;
  const uint64_t high = std::max(frontier_, stream_pos_) + cfg_.max_forward_skip;
  const bool continues = o >= last_end_ && o - last_end_ <= cfg_.random_floor;
  last_end_ = e;
  if (o < low || o > high) {
    if (++outside_ < kSeekAfterOutsideReads) {
      // One read far from the stream (a lagging or early request from another
      // thread, or the first read after a seek): serve it on the side.
      PlanBlock(o, e, plan);
      return;
    }
    // A seek: drop the stream (parts in flight finish and are discarded).
    LeaveStream();
    seq_parts_.clear();
    window_ = cfg_.initial_window;
    ++stats_.seeks;
    outside_ = 0;
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
    PlanBlock(o, e, plan);
    return;
  }
  PlanStreamRead(o, e, plan);
}

void ReaderCore::PlanStreamRead(uint64_t o, uint64_t e, Plan& plan) {
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

void ReaderCore::GrowOnWait() {
  // A read waits for bytes in flight: the store, not the reader, sets the
  // pace, so more parts in flight help at once. Doubling on every such read
  // and every completion reaches full depth within a round trip or two of the
  // small first parts, instead of one doubling per half window read.
  window_ = std::min(window_ * 2, WindowCap());
  next_grow_ = stream_pos_ + window_ / 2;
  starved_ = false;
}

void ReaderCore::ReleaseConsumed(uint64_t o, uint64_t e, const std::vector<PartPtr>& needed) {
  for (const auto& p : needed) {
    const uint64_t from = std::max(o, p->offset()) - p->offset();
    const uint64_t to = std::min(e, p->end()) - p->offset();
    if (!p->coverage().Add(from, to)) continue;
    // Every page was asked for: no later READ needs this part. The read being
    // planned pins it until its reply is sent.
    auto it = seq_parts_.find(p->offset());
    if (it != seq_parts_.end() && it->second == p) {
      seq_parts_.erase(it);
      NoteConsumed(p->offset(), p->end());
    }
  }
}

void ReaderCore::NoteConsumed(uint64_t o, uint64_t e) {
  auto next = consumed_.upper_bound(o);
  if (next != consumed_.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= o) {  // touches or overlaps the range before
      o = prev->first;
      e = std::max(e, prev->second);
      consumed_.erase(prev);
    }
  }
  while (next != consumed_.end() && next->first <= e) {
    e = std::max(e, next->second);
    next = consumed_.erase(next);
  }
  consumed_.emplace(o, e);
}

bool ReaderCore::OverlapsConsumed(uint64_t o, uint64_t e) const {
  // The last range starting before e is the only one that can reach past o
  // (ranges are merged, so they do not overlap each other).
  auto next = consumed_.lower_bound(e);
  if (next == consumed_.begin()) return false;
  return std::prev(next)->second > o;
}

void ReaderCore::NoteRereadFetch(uint64_t o, uint64_t e, const PartPtr& fetched) {
  if (!OverlapsConsumed(o, e)) return;
  ++stats_.rereads;
  stats_.reread_bytes_fetched += fetched->size();
}

uint64_t ReaderCore::WindowCap() const {
  // The bytes in flight that keep the store busy are shared by the streams:
  // each gets max_window / streams, at least two parts. Nor more than the
  // stream's fetches in flight cover: past that, the window can only hold
  // parts already fetched and not yet read, which no read waits for. When
  // the store (or the CPU) is the limit, reads wait whatever the window, and
  // a window grown on waiting alone reached max_window: one cold 1 GiB read
  // on s3sim held 300 MiB and faulted in (zeroed) 37 fresh 8 MiB buffers
  // for no speed (issue 5).
  const uint64_t streams =
      static_cast<uint64_t>(std::max(ctx_->active_streams.load(std::memory_order_relaxed), 1));
  const uint64_t reach =
      static_cast<uint64_t>(std::max(cfg_.max_parts_in_flight, 1)) * cfg_.part_size;
  const uint64_t share = std::min(cfg_.max_window / streams, reach);
  return std::min(cfg_.max_window, std::max(share, 2 * cfg_.part_size));
}

void ReaderCore::PlanBlock(uint64_t o, uint64_t e, Plan& plan) {
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
  PartPtr b = NewPart(fetch.start, fetch.end - fetch.start, /*demand=*/true);
  NoteRereadFetch(o, e, b);
  blocks_.push_front(b);
  while (blocks_.size() > static_cast<size_t>(std::max(cfg_.random_cache_blocks, 1))) {
    blocks_.pop_back();
  }
  plan.for_caller = plan.to_fetch.empty();
  plan.to_fetch.push_back(b);
  plan.needed.push_back(std::move(b));
}

void ReaderCore::StartStream(uint64_t from) {
  if (mode_ != Mode::kSequential) ctx_->active_streams.fetch_add(1, std::memory_order_relaxed);
  mode_ = Mode::kSequential;
  seq_parts_.clear();
  stream_pos_ = from;
  read_end_ = from;
  frontier_ = from;
  window_ = cfg_.initial_window;
  next_grow_ = from + window_ / 2;
  starved_ = false;
  ++stats_.stream_starts;
}

void ReaderCore::LeaveStream() {
  if (mode_ == Mode::kSequential) ctx_->active_streams.fetch_sub(1, std::memory_order_relaxed);
  mode_ = Mode::kRandom;
}

uint64_t ReaderCore::AheadCap() const {
  const uint64_t streams =
      static_cast<uint64_t>(std::max(ctx_->active_streams.load(std::memory_order_relaxed), 1));
  const uint64_t fair = ctx_->budget->limit() / streams;
  const uint64_t reserve = cfg_.part_size;  // the part kept behind the reader
  return std::max(fair > reserve ? fair - reserve : 0, cfg_.part_size);
}

void ReaderCore::ReleaseBehind() {
  // Parts that end more than backward_tolerance behind the stream position
  // go, except the last one behind it. The kernel's readahead keeps several
  // READs in flight on different threads, so the furthest read start runs
  // ahead of requests still to come by up to the readahead size (16 MiB):
  // releasing a part as soon as the stream passes it made those late requests
  // fetch their bytes again (92 extra 1 MiB GETs per GiB, issue 5).
  // With a small budget, what is kept behind must not starve what is ahead:
  // at most a quarter of this stream's share.
  const uint64_t streams =
      static_cast<uint64_t>(std::max(ctx_->active_streams.load(std::memory_order_relaxed), 1));
  const uint64_t keep = std::min(cfg_.backward_tolerance, ctx_->budget->limit() / streams / 4);
  const uint64_t keep_from = stream_pos_ > keep ? stream_pos_ - keep : 0;
  auto it = seq_parts_.begin();
  while (it != seq_parts_.end() && it->second->end() <= keep_from) {
    auto next = std::next(it);
    if (next == seq_parts_.end() || next->second->end() > stream_pos_) break;
    it = seq_parts_.erase(it);
  }
}

bool ReaderCore::SeqCovers(uint64_t o, uint64_t e) const {
  uint64_t pos = o;
  auto it = seq_parts_.upper_bound(pos);
  if (it == seq_parts_.begin()) return false;
  --it;
  for (; it != seq_parts_.end() && pos < e; ++it) {
    if (!it->second->Contains(pos)) return false;
    pos = it->second->end();
  }
  return pos >= e;
}

uint64_t ReaderCore::StreamPartLen() const {
  return std::max<uint64_t>(std::min(cfg_.part_size, window_), 1);
}

void ReaderCore::EnsureCovered(uint64_t o, uint64_t e, Plan& plan) {
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
    uint64_t len = std::min(StreamPartLen(), gap_end - pos);
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

void ReaderCore::FillWindow(std::vector<PartPtr>& to_fetch, const Part* finishing) {
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
    const uint64_t len = std::min(StreamPartLen(), object_.size - frontier_);
    if (frontier_ - std::min(frontier_, stream_pos_) >= cap) break;  // fair share reached
    PartPtr p = NewPart(frontier_, len, /*demand=*/false);
    if (!p) break;  // backpressure: resume on a later read or completion
    seq_parts_.emplace(frontier_, p);
    frontier_ += len;
    in_flight_bytes += len;
    to_fetch.push_back(std::move(p));
    ++in_flight;
  }
}

uint64_t ReaderCore::SeqBytesInFlight(const Part* finishing) const {
  uint64_t bytes = 0;
  for (const auto& [offset, p] : seq_parts_) {
    if (p.get() != finishing && !p->done()) bytes += p->size();
  }
  return bytes;
}

PartPtr ReaderCore::NewPart(uint64_t offset, uint64_t len, bool demand) {
  // The budget counts the buffer the part will hold, not just its bytes.
  const uint64_t held = Part::HeldBytes(len, ctx_->pool.get());
  if (!ctx_->budget->TryReserve(held)) {
    if (!demand) return nullptr;
    ctx_->budget->ForceReserve(held);
    stats_.forced_bytes += held;
  }
  ++stats_.fetches;
  stats_.bytes_fetched += len;
  return std::make_shared<Part>(offset, len, ctx_->budget, ctx_->pool);
}

void ReaderCore::Issue(std::vector<PartPtr>& to_fetch, bool for_caller) {
  for (auto& p : to_fetch) {
    IssueFetch(
        *ctx_, object_, std::move(p),
        [self = shared_from_this()](const PartPtr& part, Status s) {
          self->OnFetchDone(part, std::move(s));
        },
        for_caller);
  }
  to_fetch.clear();
}

void ReaderCore::OnFetchDone(const PartPtr& part, Status s) {
  std::vector<PartPtr> to_fetch;
  {
    std::lock_guard lock(mu_);
    --in_flight_;
    if (!s.ok()) {
      // Not cached: the next read that needs these bytes fetches them again.
      auto it = seq_parts_.find(part->offset());
      if (it != seq_parts_.end() && it->second == part) seq_parts_.erase(it);
      std::erase(blocks_, part);
      if (whole_ == part) whole_.reset();
    } else if (!closed_ && mode_ == Mode::kSequential) {
      if (cfg_.grow_only_when_reads_wait && starved_ && window_ < WindowCap()) GrowOnWait();
      FillWindow(to_fetch, part.get());
    }
    in_flight_ += static_cast<int>(to_fetch.size());
  }
  part->Complete(std::move(s));
  Issue(to_fetch);
}

namespace {

struct PendingRead {
  std::vector<PartPtr> parts;
  uint64_t offset = 0;
  uint64_t end = 0;
  ReadCallback done;
  std::atomic<size_t> remaining{0};

  void Finish() {
    for (const auto& p : parts) {
      if (p->failed()) {
        done(p->status().error());
        return;
      }
    }
    ReadData data;
    uint64_t pos = offset;
    for (const auto& p : parts) {
      if (!p->Contains(pos)) break;
      const uint64_t stop = std::min(end, p->end());
      data.Add(p->bytes(pos, stop - pos), p);
      pos = stop;
    }
    if (pos != end) {
      done(MakeError(EIO, "PrefetchCoverage", "internal error: read not covered by parts"));
      return;
    }
    done(std::move(data));
  }
};

}  // namespace

void ReaderCore::Serve(std::vector<PartPtr> needed, uint64_t o, uint64_t e, ReadCallback done) {
  auto pr = std::make_shared<PendingRead>();
  pr->parts = std::move(needed);
  pr->offset = o;
  pr->end = e;
  pr->done = std::move(done);
  pr->remaining.store(pr->parts.size(), std::memory_order_relaxed);
  if (pr->parts.empty()) {
    pr->Finish();
    return;
  }
  for (const auto& p : pr->parts) {
    p->OnDone([pr] {
      if (pr->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) pr->Finish();
    });
  }
}

void ReaderCore::Close() {
  std::map<uint64_t, PartPtr> seq;
  std::deque<PartPtr> blocks;
  PartPtr whole;
  {
    std::lock_guard lock(mu_);
    if (!closed_) LeaveStream();
    closed_ = true;
    seq.swap(seq_parts_);
    blocks.swap(blocks_);
    whole.swap(whole_);
  }
  // Buffers are freed here, outside the lock.
}

ReaderStats ReaderCore::stats() const {
  std::lock_guard lock(mu_);
  ReaderStats s = stats_;
  s.window = window_;
  s.sequential = mode_ == Mode::kSequential;
  return s;
}

}  // namespace bucketfs::prefetch::internal
