// FetchContext: what every reader of one Prefetcher shares — the immutable
// config, the memory budget, the range source — and the FetchTracker that
// counts fetches in flight (so tests and shutdown can wait for quiet) and
// totals them (metrics). Internal to prefetch/.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/buffer_pool.h"
#include "memory/memory_budget.h"
#include "prefetch/part.h"
#include "prefetch/prefetch_config.h"
#include "prefetch/range_source.h"

namespace bucketfs::prefetch::internal {

class HeldObjects;  // held_object.h

class FetchTracker {
 public:
  void Begin(uint64_t bytes);
  void End();
  void WaitIdle();
  uint64_t in_flight() const;
  uint64_t total_fetches() const;
  uint64_t total_bytes() const;

 private:
  mutable Mutex mu_;
  CondVar idle_;
  uint64_t in_flight_ GUARDED_BY(mu_) = 0;
  uint64_t fetches_ GUARDED_BY(mu_) = 0;
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
};

struct FetchContext {
  PrefetchConfig config;
  std::shared_ptr<memory::MemoryBudget> budget;
  std::shared_ptr<RangeSource> source;
  std::shared_ptr<FetchTracker> tracker;
  std::shared_ptr<memory::BufferPool> pool;  // part_size buffers for reuse
  // Whole objects held for random readers, one per object version (held_object.h).
  std::shared_ptr<HeldObjects> held;
  // Readers with a sequential stream; each may keep at most a fair share of
  // the budget scheduled ahead of it, so one fast reader cannot starve others.
  mutable std::atomic<int> active_streams{0};
  // Fetches started through FetchForCaller and not finished (at most
  // config.max_fetches_on_caller).
  mutable std::atomic<int> on_caller{0};
  // Reads answered from bytes already in memory, and reads that waited for
  // a fetch (metrics).
  mutable std::atomic<uint64_t> read_hits{0};
  mutable std::atomic<uint64_t> read_misses{0};
  // Bytes of parts dropped without a read served from them (Part::CountWasteIn).
  std::shared_ptr<std::atomic<uint64_t>> wasted_bytes = std::make_shared<std::atomic<uint64_t>>(0);
};

// A string naming exactly one object version (bucket, key, ETag and size):
// what caches of fetched bytes are keyed by, so a changed object never hands
// out old bytes.
std::string VersionKey(const ObjectVersion& o);

// Starts the fetch that fills `part`; `after(part, status)` runs once it is
// finished, before the tracker counts it done. The closure holds the part (and
// so its buffer) until then, and drops it before End() so that WaitIdle()
// returning means every finished fetch has let go of its buffer.
// `for_caller`: the calling thread waits for the part anyway; within
// config.max_fetches_on_caller the source may fetch it on this thread.
// REQUIRES: no lock held (the source may complete inline).
void IssueFetch(const FetchContext& ctx, const ObjectVersion& object, PartPtr part,
                std::function<void(const PartPtr&, Status)> after, bool for_caller = false);

}  // namespace bucketfs::prefetch::internal
