// CachingRangeSource: see caching_range_source.h.
#include "prefetch/caching_range_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/thread_priority.h"

namespace bucketfs::prefetch {
namespace {

// Writes to one disk gain little from more writers than this.
constexpr int kFillThreads = 2;

void LowerFillThread() {
  if (!base::LowerThisThreadsPriority()) {
    spdlog::debug("data cache: fill thread keeps its priority: {}", std::strerror(errno));
  }
}
}  // namespace

CachingRangeSource::CachingRangeSource(std::shared_ptr<RangeSource> inner,
                                       std::shared_ptr<cache::DataCache> cache, int threads,
                                       uint64_t part_size,
                                       std::shared_ptr<memory::MemoryBudget> budget, FillMode mode)
    : inner_(std::move(inner)),
      cache_(std::move(cache)),
      budget_(std::move(budget)),
      mode_(mode),
      copies_(part_size, std::max<size_t>(2, kMaxFillBacklog / std::max<uint64_t>(part_size, 1))),
      pool_(std::make_unique<base::WorkerPool>(threads)),
      // Best effort: the cache's writes (and the checks of completed files)
      // use only CPU time the readers leave, as they never wait for the disk.
      fill_pool_(std::make_unique<base::WorkerPool>(kFillThreads, mode == FillMode::kBestEffort
                                                                      ? LowerFillThread
                                                                      : std::function<void()>{})) {}

// Each pool runs what is queued before joining: first the reads and
// completions, which may queue writes, then the writes.
CachingRangeSource::~CachingRangeSource() {
  pool_.reset();
  fill_pool_.reset();
}

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
    // Off the transport thread that completed the fetch.
    pool_->Post([this, file = std::move(file), offset, dest, done = std::move(done)] {
      FillAndComplete(file, offset, dest, done);
    });
  };
  if (on_caller) {
    inner_->FetchForCaller(object, offset, dest, std::move(filled));
  } else {
    inner_->FetchAsync(object, offset, dest, std::move(filled));
  }
}

void CachingRangeSource::FillAndComplete(const std::shared_ptr<cache::CachedFile>& file,
                                         uint64_t offset, std::span<std::byte> dest,
                                         const std::function<void(Status)>& done) {
  const uint64_t n = dest.size();
  const uint64_t held = copies_.HeldBytes(n);
  const bool copy_fits = fill_backlog_.fetch_add(n) + n <= kMaxFillBacklog &&
                         (budget_ == nullptr || budget_->TryReserve(held));
  if (!copy_fits) {  // behind, or no memory for a copy: `dest` is valid until done
    if (mode_ == FillMode::kComplete) {
      file->Fill(offset, dest);
    } else {
      cache_->CountSkippedFill(n);
    }
    fill_backlog_.fetch_sub(n);
    done(Status::Ok());
    return;
  }
  // Pooled: a fresh buffer of a part's size would be faulted in page by page.
  auto copy = std::make_shared<memory::Buffer>(copies_.Get(n));
  auto sums = std::make_shared<cache::CachedFile::BlockSums>(
      file->CopyForFill(offset, dest, std::span<std::byte>(copy->get(), n)));
  // Queued before `done`, so that WaitForFills after a completion sees it.
  fill_pool_->Post([this, file, offset, n, held, copy, sums] {
    file->Fill(offset, std::span<const std::byte>(copy->get(), n), sums.get());
    copies_.Put(std::move(*copy), n);
    if (budget_ != nullptr) budget_->Release(held);
    fill_backlog_.fetch_sub(n);
  });
  done(Status::Ok());
}

void CachingRangeSource::WaitForFills() {
  pool_->Drain();
  fill_pool_->Drain();
}

}  // namespace bucketfs::prefetch
