// ListingPrefetcher: see listing_prefetcher.h.
#include "fuse/listing_prefetcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "fuse/dir_listing.h"
#include "fuse/subtree_lister.h"

namespace bucketfs::fs {

ListingPrefetcher::ListingPrefetcher(s3::ObjectClient* client, CachedMetadata* meta, int page_size,
                                     int workers)
    : client_(client), meta_(meta), page_size_(page_size), workers_(std::max(1, workers)) {
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { Run(); });
}

ListingPrefetcher::~ListingPrefetcher() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.NotifyAll();
  done_cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

void ListingPrefetcher::Prefetch(const std::string& bucket, const std::string& parent,
                                 const std::vector<std::string>& dir_keys) {
  size_t added = 0;
  if (dir_keys.size() >= kFlatMinDirs) {
    std::vector<std::string> dirs = dir_keys;
    std::sort(dirs.begin(), dirs.end());
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    // Four ranges per worker, at least 4 directories each, queued in key
    // order: a walk reads the directories in that order, so the front of
    // the fetches keeps moving just ahead of it instead of one range per
    // worker that the walk catches up with.
    const size_t ranges = std::min<size_t>(4 * static_cast<size_t>(workers_), dirs.size() / 4);
    MutexLock lock(mu_);
    for (size_t r = 0; r < ranges; ++r) {
      const size_t from = dirs.size() * r / ranges, to = dirs.size() * (r + 1) / ranges;
      Job job{bucket, parent, {}, to < dirs.size() ? dirs[to] : std::string(), true};
      for (size_t i = from; i < to; ++i) {
        if (pending_.emplace(bucket, dirs[i]).second) job.dirs.push_back(dirs[i]);
      }
      if (job.dirs.empty()) continue;
      queue_.push_back(std::move(job));
      ++added;
    }
  } else {
    MutexLock lock(mu_);
    for (const auto& key : dir_keys) {
      if (!pending_.emplace(bucket, key).second) continue;
      queue_.push_back(Job{bucket, parent, {key}, {}, false});
      ++added;
    }
  }
  if (added > 0) cv_.NotifyAll();
}

bool ListingPrefetcher::WaitFor(const std::string& bucket, const std::string& dir_key,
                                std::chrono::milliseconds limit) {
  const DirId id(bucket, dir_key);
  MutexLock lock(mu_);
  if (running_.count(id) == 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!stop_ && running_.count(id) != 0 && done_cv_.WaitUntil(mu_, deadline)) {
  }
  return true;
}

bool ListingPrefetcher::Stopped() {
  MutexLock lock(mu_);
  return stop_;
}

void ListingPrefetcher::Done(const std::string& bucket, const std::vector<std::string>& dirs) {
  // Notified under the lock: a waiter may end this object once it wakes.
  MutexLock lock(mu_);
  for (const auto& d : dirs) {
    running_.erase({bucket, d});
    pending_.erase({bucket, d});
  }
  done_cv_.NotifyAll();
}

void ListingPrefetcher::Run() {
  for (;;) {
    Job job;
    {
      MutexLock lock(mu_);
      while (!stop_ && queue_.empty()) cv_.Wait(mu_);
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      for (const auto& d : job.dirs) running_.emplace(job.bucket, d);
    }
    std::vector<std::string> again;
    if (job.flat) {
      again = RunFlat(job);  // releases its directories itself
    } else {
      ListOne(job.bucket, job.dirs.front());
      Done(job.bucket, job.dirs);
    }
    if (!again.empty()) Prefetch(job.bucket, job.parent, again);  // left by the page cap
  }
}

std::vector<std::string> ListingPrefetcher::RunFlat(const Job& job) {
  SubtreeRange range{job.bucket, job.parent, {}, job.end};
  for (const auto& d : job.dirs) {
    if (!meta_->HasListing(job.bucket, d)) range.dirs.push_back(d);
  }
  // Keys from the first stale directory on; the fresh ones before it are skipped.
  std::set<std::string> committed;  // released by their commit
  auto left = range.dirs.empty()    // all fresh already (a warm walk)
                  ? std::vector<std::string>()
                  : ListSubtrees(
                        *client_, range, page_size_, kMaxRangePages,
                        [&](CompleteListings done) {
                          for (const auto& d : done) committed.insert(d.first);
                          Commit(job.bucket, std::move(done));
                        },
                        [this] { return Stopped(); });
  std::vector<std::string> released;  // fresh, given up, or left by the page cap
  for (const auto& d : job.dirs) {
    if (committed.count(d) == 0) released.push_back(d);
  }
  Done(job.bucket, released);
  // Past the page cap: the rest is queued again (flat from where this range
  // stopped). A range that got nothing at all (an error) is dropped.
  if (left.size() == range.dirs.size()) return {};
  return left;
}

void ListingPrefetcher::Commit(const std::string& bucket, CompleteListings done) {
  MutexLock lock(commit_mu_);
  to_commit_.emplace_back(bucket, std::move(done));
  if (committing_) return;  // the running commit takes it with its next batch
  committing_ = true;
  while (!to_commit_.empty()) {
    auto batch = std::move(to_commit_);
    to_commit_.clear();
    lock.Unlock();
    // One transaction per bucket: merge the batch's pages of each.
    std::sort(batch.begin(), batch.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < batch.size();) {
      CompleteListings all = std::move(batch[i].second);
      size_t j = i + 1;
      for (; j < batch.size() && batch[j].first == batch[i].first; ++j) {
        std::move(batch[j].second.begin(), batch[j].second.end(), std::back_inserter(all));
      }
      meta_->StoreListings(batch[i].first, all);
      std::vector<std::string> stored;
      stored.reserve(all.size());
      for (auto& d : all) stored.push_back(std::move(d.first));
      Done(batch[i].first, stored);
      i = j;
    }
    lock.Lock();
  }
  committing_ = false;
}

void ListingPrefetcher::ListOne(const std::string& bucket, const std::string& dir_key) {
  if (meta_->HasListing(bucket, dir_key)) return;  // already fresh
  // An incomplete listing is not cached.
  auto entries = ListWholeDirectory(*client_, bucket, dir_key, page_size_, SIZE_MAX,
                                    [this] { return Stopped(); });
  if (!entries.ok()) {
    if (entries.error().errno_value != ECANCELED) {
      spdlog::debug("prefetch listing s3://{}/{}: {}", bucket, dir_key, entries.error().ToString());
    }
    return;
  }
  meta_->StoreListing(bucket, dir_key, *entries);
}

}  // namespace bucketfs::fs
