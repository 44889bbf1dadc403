// SiblingHints: the files that follow a file in its directory's listing, so
// that opening one file can tell the read path which files are likely to be
// opened next (readers of many small files go in directory order: DataLoader,
// tar, cp -r). Remembers the last complete listing of a bounded number of
// directories; a hint is only a guess, a stale one costs one wasted fetch.
// Thread-safe.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "fuse/dir_listing.h"
#include "fuse/file_reader.h"
#include "fuse/thread_annotations.h"

namespace bucketfs::fs {

class SiblingHints {
 public:
  explicit SiblingHints(size_t max_dirs = 64) : max_dirs_(max_dirs) {}

  // A complete listing of directory `dir` (bucket, key prefix `dir_key`).
  void Remember(Ino dir, const std::string& bucket, const std::string& dir_key,
                const std::vector<ListedEntry>& entries);
  // Up to `n` files listed after `name` in `dir`, nearest first.
  std::vector<ObjectVersion> After(Ino dir, const std::string& name, size_t n) const;

 private:
  struct Listing {
    std::vector<ObjectVersion> files;
    std::unordered_map<std::string, size_t> index;  // name -> position in files
  };

  const size_t max_dirs_;
  mutable std::mutex mu_;
  std::map<Ino, std::shared_ptr<const Listing>> listings_ GUARDED_BY(mu_);
  std::deque<Ino> order_ GUARDED_BY(mu_);  // oldest first
};

}  // namespace bucketfs::fs
