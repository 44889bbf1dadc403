// CachingRangeSource: see caching_range_source.h.
#include "prefetch/caching_range_source.h"

#include <utility>

namespace bucketfs::prefetch {

CachingRangeSource::CachingRangeSource(std::shared_ptr<RangeSource> inner,
                                       std::shared_ptr<cache::DataCache> cache, int threads)
    : inner_(std::move(inner)),
      cache_(std::move(cache)),
      pool_(std::make_unique<base::WorkerPool>(threads)) {}

// The pool runs what is queued (fills and their completions) before joining.
CachingRangeSource::~CachingRangeSource() = default;

void CachingRangeSource::FetchAsync(const ObjectVersion& object, uint64_t offset,
                                    std::span<std::byte> dest, std::function<void(Status)> done) {
  pool_->Post([this, object, offset, dest, done = std::move(done)]() mutable {
    Fetch(object, offset, dest, /*on_caller=*/false, std::move(done));
  });
}

void CachingRangeSource::FetchForCaller(const ObjectVersion& object, uint64_t offset,
                                        std::span<std::byte> dest,
                                        std::function<void(Status)> done) {
  Fetch(object, offset, dest, /*on_caller=*/true, std::move(done));
}

void CachingRangeSource::Fetch(const ObjectVersion& object, uint64_t offset,
                               std::span<std::byte> dest, bool on_caller,
                               std::function<void(Status)> done) {
  std::shared_ptr<cache::CachedFile> file = cache_->Acquire(object, /*create=*/true);
  if (file != nullptr && file->Read(offset, dest)) {
    done(Status::Ok());
    return;
  }
  auto filled = [this, file = std::move(file), offset, dest,
                 done = std::move(done)](Status s) mutable {
    if (!s.ok() || file == nullptr) {
      done(std::move(s));
      return;
    }
    // `dest` stays valid until done: write it to the cache first, off the
    // transport thread that completed the fetch.
    pool_->Post([file = std::move(file), offset, dest, done = std::move(done)] {
      file->Fill(offset, dest);
      done(Status::Ok());
    });
  };
  if (on_caller) {
    inner_->FetchForCaller(object, offset, dest, std::move(filled));
  } else {
    inner_->FetchAsync(object, offset, dest, std::move(filled));
  }
}

}  // namespace bucketfs::prefetch
