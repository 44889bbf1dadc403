// ListingPrefetcher: when a directory has been read, the listings of its
// subdirectories are fetched ahead, in parallel, into the metadata cache, so
// that a recursive walk (find, os.walk) finds them there instead of waiting
// for one LIST at a time. One level ahead only: a plain `ls` of a huge tree
// costs at most one LIST per subdirectory, never a crawl.
//
// A fixed set of worker threads (bounded concurrency) takes directories from
// a queue; a directory already fresh in the cache or already queued is
// skipped. Failures are dropped: a prefetch is only a guess. The destructor
// drops what is still queued and joins the workers.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fuse/cached_metadata.h"
#include "fuse/thread_annotations.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

class ListingPrefetcher {
 public:
  // REQUIRES: client and meta outlive this object.
  ListingPrefetcher(s3::ObjectClient* client, CachedMetadata* meta, int page_size, int workers);
  ~ListingPrefetcher();
  ListingPrefetcher(const ListingPrefetcher&) = delete;
  ListingPrefetcher& operator=(const ListingPrefetcher&) = delete;

  // Queues the listings of `dir_keys` (each ending in "/") in `bucket`.
  void Prefetch(const std::string& bucket, const std::vector<std::string>& dir_keys);

 private:
  void Run();
  void ListOne(const std::string& bucket, const std::string& dir_key);

  s3::ObjectClient* const client_;
  CachedMetadata* const meta_;
  const int page_size_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::deque<std::pair<std::string, std::string>> queue_ GUARDED_BY(mu_);
  std::set<std::pair<std::string, std::string>> pending_ GUARDED_BY(mu_);  // queued or running
  std::vector<std::thread> threads_;
};

}  // namespace bucketfs::fs
