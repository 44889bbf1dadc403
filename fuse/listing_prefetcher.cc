// ListingPrefetcher: see listing_prefetcher.h.
#include "fuse/listing_prefetcher.h"

#include <spdlog/spdlog.h>

#include "fuse/dir_listing.h"

namespace bucketfs::fs {

ListingPrefetcher::ListingPrefetcher(s3::ObjectClient* client, CachedMetadata* meta, int page_size,
                                     int workers)
    : client_(client), meta_(meta), page_size_(page_size) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Run(); });
}

ListingPrefetcher::~ListingPrefetcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ListingPrefetcher::Prefetch(const std::string& bucket,
                                 const std::vector<std::string>& dir_keys) {
  size_t added = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& key : dir_keys) {
      if (!pending_.emplace(bucket, key).second) continue;
      queue_.emplace_back(bucket, key);
      ++added;
    }
  }
  if (added > 0) cv_.notify_all();
}

void ListingPrefetcher::Run() {
  for (;;) {
    std::pair<std::string, std::string> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    ListOne(job.first, job.second);
    std::lock_guard lock(mu_);
    pending_.erase(job);
  }
}

void ListingPrefetcher::ListOne(const std::string& bucket, const std::string& dir_key) {
  if (meta_->Listing(bucket, dir_key)) return;  // already fresh
  DirListing listing(dir_key);
  s3::ListObjectsV2Params p;
  p.bucket = bucket;
  p.prefix = dir_key;
  p.delimiter = '/';
  p.max_keys = page_size_;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    auto r = client_->ListObjectsV2(p);
    if (!r.ok()) {
      spdlog::debug("prefetch ListObjectsV2 s3://{}/{}: {}", bucket, dir_key, r.error().ToString());
      return;
    }
    listing.AddPage(*r);
    if (!r->is_truncated) break;
    if (r->next_continuation_token.empty()) return;  // cannot be completed: not cached
    p.continuation_token = r->next_continuation_token;
  }
  meta_->StoreListing(bucket, dir_key, listing.entries());
}

}  // namespace bucketfs::fs
