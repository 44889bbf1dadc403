// CachingRangeSource: a RangeSource in front of another that serves fetches
// from the local data cache (cache/data_cache.h) when every block they need
// is there and checks out, and otherwise fetches from the inner source and
// writes what arrives into the cache on its way to the reader: one GET,
// never a second one to fill the cache.
//
// Cache reads run on a pool of the source's own, so that neither the FUSE
// thread that issued a fetch nor the transport thread that completed it
// waits for the local disk. A fetched range is copied and handed to the
// reader at once; a second pool writes the copy into the cache, so the
// reader never waits for the disk either. While kMaxFillBacklog bytes wait
// to be written (or the budget has no room for a copy), the fill mode decides:
// kComplete writes further fetches before the reader gets them (the disk
// then paces the reader rather than memory growing: every byte read lands
// in the cache); kBestEffort hands them to the reader unwritten (the store,
// not the disk, paces the reader; a later read fetches and fills them). A fetch that
// is only partly cached is fetched whole (blocks already present are not
// rewritten).
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/task_runner.h"
#include "cache/data_cache.h"
#include "memory/buffer_pool.h"
#include "memory/memory_budget.h"
#include "prefetch/range_source.h"

namespace bucketfs::prefetch {

class CachingRangeSource : public RangeSource {
 public:
  enum class FillMode { kComplete, kBestEffort };
  // REQUIRES: inner and cache are not null; threads > 0. `part_size`: the
  // largest fetch the prefetcher makes (the size of the pooled copies).
  // `budget` (may be null): the read path's memory budget, charged for the
  // copies waiting for their cache write; when it has no room, the reader
  // writes its range into the cache itself before it gets it (kComplete)
  // or leaves it out (kBestEffort). kBestEffort also runs the cache's writes
  // at the lowest priority, so a busy CPU leaves ranges out rather than
  // slowing the readers.
  CachingRangeSource(std::shared_ptr<RangeSource> inner, std::shared_ptr<cache::DataCache> cache,
                     int threads, uint64_t part_size = 8ull << 20,
                     std::shared_ptr<memory::MemoryBudget> budget = nullptr,
                     FillMode mode = FillMode::kComplete);
  ~CachingRangeSource() override;

  void FetchAsync(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                  std::function<void(Status)> done) override;
  void FetchForCaller(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                      std::function<void(Status)> done) override;

  const std::shared_ptr<cache::DataCache>& cache() const { return cache_; }
  // Returns once every range fetched so far is written into the cache.
  void WaitForFills();

 private:
  // Serves from the cache or fetches through `inner_`; `on_caller` as
  // FetchForCaller.
  void Fetch(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
             bool on_caller, std::function<void(Status)> done);

  // Hands `dest` to `done` and writes it into `file`: from a copy after
  // `done` while the backlog and the budget allow, else before. On a pool thread.
  void FillAndComplete(const std::shared_ptr<cache::CachedFile>& file, uint64_t offset,
                       std::span<std::byte> dest, const std::function<void(Status)>& done);

 public:
  // Bytes of fetched ranges that may wait in memory for their cache write.
  static constexpr uint64_t kMaxFillBacklog = 64ull << 20;

 private:
  const std::shared_ptr<RangeSource> inner_;
  const std::shared_ptr<cache::DataCache> cache_;
  const std::shared_ptr<memory::MemoryBudget> budget_;
  const FillMode mode_;
  std::atomic<uint64_t> fill_backlog_{0};
  memory::BufferPool copies_;  // of fetched ranges, until written
  std::unique_ptr<base::WorkerPool> pool_;
  std::unique_ptr<base::WorkerPool> fill_pool_;  // the cache writes
};

}  // namespace bucketfs::prefetch
