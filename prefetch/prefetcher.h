// Prefetcher: the read path of one mount. It owns what all open files share —
// the immutable PrefetchConfig, the MemoryBudget for every prefetched byte,
// the RangeSource — and makes one ObjectReader per open file (see
// object_reader.h for how a reader streams and its modes).
//
// File-level prefetch: readers of many small files in directory order open
// them one after another, each open paying a full time-to-first-byte. The FUSE
// layer calls HintNextFiles on open with the next siblings; small objects
// among them are fetched whole at once, within hint_budget_fraction of the
// budget, and Open of a hinted version adopts the buffer (even while it is
// still in flight) instead of fetching again. Hints never opened age out.
//
// Thread-safe. Readers and fetches in flight keep what they need alive by
// shared ownership. The destructor waits for fetches in flight to end.
// REQUIRES: every ObjectReader is closed before the Prefetcher is destroyed
// (a read after that still works, but its fetch could then hold the last
// reference to the source and release it on a transport thread).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "memory/memory_budget.h"
#include "memory/spare_memory.h"
#include "prefetch/object_reader.h"
#include "prefetch/prefetch_config.h"
#include "prefetch/range_source.h"

namespace bucketfs::prefetch {

namespace internal {
struct FetchContext;
class HintCache;
}  // namespace internal

struct PrefetcherStats {
  uint64_t fetches = 0;        // fetches started (readers and hints)
  uint64_t bytes_fetched = 0;  // bytes they asked for
  uint64_t in_flight = 0;      // fetches not yet done
  uint64_t hinted = 0;         // whole-object fetches started by hints
  uint64_t hint_hits = 0;      // opens that adopted a hinted buffer
  uint64_t budget_used = 0;
  uint64_t budget_peak = 0;
  uint64_t buffer_reuses = 0;  // part buffers taken from the pool
  uint64_t read_hits = 0;      // reads answered from bytes already fetched
  uint64_t read_misses = 0;    // reads that waited for a fetch
  uint64_t wasted_bytes = 0;   // fetched, then dropped without a read served from them
};

class Prefetcher {
 public:
  // Budget of config.budget_bytes (or memory::MemoryBudget::DefaultBudgetBytes()).
  // REQUIRES: source != nullptr
  Prefetcher(PrefetchConfig config, std::shared_ptr<RangeSource> source);
  // With a budget shared with others (tests, or several mounts in a process),
  // and part buffers shared with the mount's write path (may be null:
  // memory::BufferPool).
  Prefetcher(PrefetchConfig config, std::shared_ptr<RangeSource> source,
             std::shared_ptr<memory::MemoryBudget> budget,
             std::shared_ptr<memory::SpareMemory> spare_memory = nullptr);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // A reader for one version of one object. Nothing is fetched before the
  // first read (unless the version was hinted). Dropping the last reference
  // closes the reader.
  std::shared_ptr<ObjectReader> Open(const ObjectVersion& object);

  // The files likely to be opened next, nearest first (see the header
  // comment). Cheap to call on every open; already hinted versions are skipped.
  void HintNextFiles(const std::vector<ObjectVersion>& next);

  const PrefetchConfig& config() const;
  const memory::MemoryBudget& budget() const;
  PrefetcherStats stats() const;

  // Blocks until no fetch is in flight (tests, shutdown).
  void WaitIdle();

 private:
  std::shared_ptr<internal::FetchContext> ctx_;
  std::shared_ptr<internal::HintCache> hints_;
};

}  // namespace bucketfs::prefetch
