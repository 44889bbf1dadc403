// ObjectReader: planning a read under the lock, then fetching and answering
// without it; the whole-object mode; fetch completion; close.
#include "prefetch/object_reader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <future>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch {

ObjectReader::ObjectReader(std::shared_ptr<const internal::FetchContext> ctx, ObjectVersion object,
                           PartPtr adopted_whole)
    : ctx_(std::move(ctx)),
      cfg_(ctx_->config),
      object_(std::move(object)),
      mode_(object_.size < cfg_.small_object_threshold ? Mode::kWhole : Mode::kRandom),
      whole_(std::move(adopted_whole)),
      window_(cfg_.initial_window),
      locality_(cfg_.random_floor, cfg_.random_cache_blocks) {}

ObjectReader::~ObjectReader() { Close(); }

void ObjectReader::ReadFromParts(uint64_t offset, uint64_t size, ReadCallback done) {
  Plan plan;
  uint64_t end = offset;
  bool closed = false;
  {
    MutexLock lock(mu_);
    closed = closed_;
    if (!closed && offset < object_.size && size > 0) {
      end = offset + std::min<uint64_t>(size, object_.size - offset);
      // A read the whole object held for random reads covers needs no plan.
      if (!PlanHeld(offset, end, plan)) {
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
      }
      in_flight_ += static_cast<int>(plan.to_fetch.size());
      any_read_ = true;
      ++stats_.reads;
      bool waited = false;
      for (const auto& p : plan.needed) {
        if (!p->done()) {
          ++stats_.waited_reads;
          waited = true;
          break;
        }
      }
      (waited ? ctx_->read_misses : ctx_->read_hits).fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Callbacks and the source run without mu_ (either may re-enter the reader).
  if (closed) {
    done(MakeError(EBADF, "ReaderClosed", "read after close of " + object_.key));
    return;
  }
  Issue(plan.to_fetch, plan.for_caller);
  if (plan.fill) plan.fill->Fill();
  Serve(std::move(plan.needed), offset, end, std::move(done));
}

Result<size_t> ObjectReader::Read(uint64_t offset, std::span<std::byte> out) {
  std::promise<Result<size_t>> promise;
  auto future = promise.get_future();
  ReadFromParts(offset, out.size(), [&promise, out](Result<ReadData> r) {
    if (!r.ok()) {
      promise.set_value(r.error());
      return;
    }
    promise.set_value(r->CopyTo(out));
  });
  return future.get();
}

void ObjectReader::PlanWhole(Plan& plan) {
  if (!whole_ || whole_->failed()) {
    whole_ = NewPart(0, object_.size, /*demand=*/true);
    plan.to_fetch.push_back(whole_);
  }
  plan.needed.push_back(whole_);
}

PartPtr ObjectReader::NewPart(uint64_t offset, uint64_t len, bool demand) {
  // A kept part gives its buffer to a new part rather than the kernel
  // zeroing a new one: kept parts only live in buffers the pool (or the
  // mount's spare memory) has.
  if (ctx_->pool && ctx_->pool->capacity() > 0 && !ctx_->pool->HasSpare()) DropOldestKept();
  // The budget counts the buffer the part will hold, not just its bytes.
  const uint64_t held = Part::HeldBytes(len, ctx_->pool.get());
  // Parts kept unread yield their budget to the parts a read is coming for.
  bool reserved = ctx_->budget->TryReserve(held);
  while (!reserved && DropOldestKept()) reserved = ctx_->budget->TryReserve(held);
  if (!reserved) {
    if (!demand) return nullptr;
    ctx_->budget->ForceReserve(held);
    stats_.forced_bytes += held;
  }
  ++stats_.fetches;
  stats_.bytes_fetched += len;
  auto part = std::make_shared<Part>(offset, len, ctx_->budget, ctx_->pool);
  part->CountWasteIn(ctx_->wasted_bytes);
  return part;
}

void ObjectReader::NoteRereadFetch(uint64_t o, uint64_t e, const PartPtr& fetched) {
  if (!consumed_.Overlaps(o, e)) return;
  ++stats_.rereads;
  stats_.reread_bytes_fetched += fetched->size();
}

void ObjectReader::Issue(std::vector<PartPtr>& to_fetch, bool for_caller) {
  for (auto& p : to_fetch) {
    // The completion holds the context, not the reader: a reader dropped
    // while its fetches are in flight closes at once.
    internal::IssueFetch(
        *ctx_, object_, std::move(p),
        [reader = weak_from_this(), ctx = ctx_](const PartPtr& part, Status s) {
          if (auto self = reader.lock()) {
            self->OnFetchDone(part, std::move(s));
          } else {
            part->Complete(std::move(s));
          }
        },
        for_caller);
  }
  to_fetch.clear();
}

void ObjectReader::OnFetchDone(const PartPtr& part, Status s) {
  std::vector<PartPtr> to_fetch;
  {
    MutexLock lock(mu_);
    --in_flight_;
    if (!s.ok()) {
      // Not cached: the next read that needs these bytes fetches them again.
      auto it = seq_parts_.find(part->offset());
      if (it != seq_parts_.end() && it->second == part) seq_parts_.erase(it);
      std::erase(blocks_, part);
      if (whole_ == part) whole_.reset();
      auto kept = kept_.find(part->offset());
      if (kept != kept_.end() && kept->second.part == part) {
        kept_bytes_ -= part->size();
        kept_.erase(kept);
      }
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

void ObjectReader::Serve(std::vector<PartPtr> needed, uint64_t o, uint64_t e, ReadCallback done) {
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

void ObjectReader::Close() {
  std::map<uint64_t, PartPtr> seq;
  std::shared_ptr<internal::HeldObject> held;
  std::deque<PartPtr> blocks;
  std::map<uint64_t, KeptPart> kept;
  PartPtr whole;
  {
    MutexLock lock(mu_);
    if (!closed_) LeaveStream();
    closed_ = true;
    seq.swap(seq_parts_);
    held.swap(held_);
    blocks.swap(blocks_);
    kept.swap(kept_);
    kept_bytes_ = 0;
    whole.swap(whole_);
  }
  // Buffers are freed here, outside the lock.
}

ReaderStats ObjectReader::stats() const {
  MutexLock lock(mu_);
  ReaderStats s = stats_;
  s.window = window_;
  s.sequential = mode_ == Mode::kSequential;
  return s;
}

}  // namespace bucketfs::prefetch
