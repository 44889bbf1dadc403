// CachingRangeSource: a RangeSource in front of another that serves fetches
// from the local data cache (cache/data_cache.h) when every block they need
// is there and checks out, and otherwise fetches from the inner source and
// writes what arrives into the cache on its way to the reader: one GET,
// never a second one to fill the cache.
//
// Cache reads, fills and the completions after a fill run on a pool of the
// source's own, so that neither the FUSE thread that issued a fetch nor the
// transport thread that completed it waits for the local disk. A fetch that
// is only partly cached is fetched whole (blocks already present are not
// rewritten).
//
// Thread-safe.
#pragma once

#include <memory>

#include "base/task_runner.h"
#include "cache/data_cache.h"
#include "prefetch/range_source.h"

namespace bucketfs::prefetch {

class CachingRangeSource : public RangeSource {
 public:
  // REQUIRES: inner and cache are not null; threads > 0.
  CachingRangeSource(std::shared_ptr<RangeSource> inner, std::shared_ptr<cache::DataCache> cache,
                     int threads);
  ~CachingRangeSource() override;

  void FetchAsync(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                  std::function<void(Status)> done) override;
  void FetchForCaller(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                      std::function<void(Status)> done) override;

  const std::shared_ptr<cache::DataCache>& cache() const { return cache_; }

 private:
  // Serves from the cache or fetches through `inner_`; `on_caller` as
  // FetchForCaller.
  void Fetch(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
             bool on_caller, std::function<void(Status)> done);

  const std::shared_ptr<RangeSource> inner_;
  const std::shared_ptr<cache::DataCache> cache_;
  std::unique_ptr<base::WorkerPool> pool_;
};

}  // namespace bucketfs::prefetch
