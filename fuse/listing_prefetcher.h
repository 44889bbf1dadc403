// ListingPrefetcher: when a directory has been read, the listings of its
// subdirectories are fetched ahead, in parallel, into the metadata cache, so
// that a recursive walk (find, os.walk) finds them there instead of waiting
// for one LIST at a time.
//
// Two shapes, by the number of subdirectories:
// - a few: one delimiter LIST per subdirectory (one level ahead only);
// - many (a wide tree, kFlatMinDirs or more): the subdirectories are cut into
//   contiguous key ranges (four per worker), each listed flat (no delimiter,
//   see subtree_lister.h): one request per 1000 keys fills every directory
//   of the range's subtrees at once. Each range stops after a bounded number
//   of pages, so a plain `ls` of a huge tree is never a crawl; what a range
//   left is listed per directory.
//
// Listings completed by the workers are stored by group commit: one worker
// at a time (the first to find no commit running) stores everything that
// accumulated in one cache transaction (one fsync), then wakes their
// waiters; the others go on listing instead of queueing on LMDB's single
// writer lock, one fsync each.
//
// A fixed set of worker threads (bounded concurrency) takes jobs from a
// queue; a directory already fresh in the cache or already queued is
// skipped. Failures are dropped: a prefetch is only a guess. WaitFor lets a
// readdir wait for a listing already in flight instead of sending the same
// LIST again. The destructor drops what is still queued and joins the
// workers.
// Thread-safe.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fuse/cached_metadata.h"
#include "fuse/subtree_lister.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

class ListingPrefetcher {
 public:
  // At least this many subdirectories: flat range listings.
  static constexpr size_t kFlatMinDirs = 16;
  // Pages one flat range may request before it hands the rest back.
  static constexpr int kMaxRangePages = 16;

  // REQUIRES: client and meta outlive this object.
  ListingPrefetcher(s3::ObjectClient* client, CachedMetadata* meta, int page_size, int workers);
  ~ListingPrefetcher();
  ListingPrefetcher(const ListingPrefetcher&) = delete;
  ListingPrefetcher& operator=(const ListingPrefetcher&) = delete;

  // Queues the listings of `dir_keys` (each ending in "/"), the
  // subdirectories of `parent` in `bucket`.
  void Prefetch(const std::string& bucket, const std::string& parent,
                const std::vector<std::string>& dir_keys) EXCLUDES(mu_);

  // When the listing of `dir_key` is being fetched right now, waits (at most
  // `limit`) until it is stored or given up. True when it waited.
  bool WaitFor(const std::string& bucket, const std::string& dir_key,
               std::chrono::milliseconds limit = std::chrono::seconds(10)) EXCLUDES(mu_);

 private:
  using DirId = std::pair<std::string, std::string>;  // bucket, dir key
  struct Job {
    std::string bucket, parent;
    std::vector<std::string> dirs;  // one (delimiter LIST) or a flat range
    std::string end;                // flat: the next range's first key
    bool flat = false;
  };
  void Run() EXCLUDES(mu_);
  // Returns the directories the range left (page cap), to queue again.
  std::vector<std::string> RunFlat(const Job& job);
  void ListOne(const std::string& bucket, const std::string& dir_key);
  // Stores `done` with the next group commit, then wakes its waiters (Done).
  void Commit(const std::string& bucket, CompleteListings done) EXCLUDES(commit_mu_);
  // The listings of `dirs` are stored or given up: wakes their waiters.
  void Done(const std::string& bucket, const std::vector<std::string>& dirs) EXCLUDES(mu_);
  bool Stopped() EXCLUDES(mu_);

  s3::ObjectClient* const client_;
  CachedMetadata* const meta_;
  const int page_size_;
  const int workers_;
  Mutex mu_;
  CondVar cv_;       // workers: a job or stop
  CondVar done_cv_;  // WaitFor: a listing finished
  bool stop_ GUARDED_BY(mu_) = false;
  std::deque<Job> queue_ GUARDED_BY(mu_);
  std::set<DirId> pending_ GUARDED_BY(mu_);  // queued or running
  std::set<DirId> running_ GUARDED_BY(mu_);  // a worker is listing it now, or it awaits its commit
  // Done is called without commit_mu_; were they ever nested, this is the order.
  Mutex commit_mu_ ACQUIRED_BEFORE(mu_);
  std::vector<std::pair<std::string, CompleteListings>> to_commit_ GUARDED_BY(commit_mu_);
  bool committing_ GUARDED_BY(commit_mu_) = false;  // a worker is storing a batch
  std::vector<std::thread> threads_;
};

}  // namespace bucketfs::fs
