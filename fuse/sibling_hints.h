// SiblingHints: the files that follow a file in its directory's listing, so
// that opening one file can tell the read path which files are likely to be
// opened next (readers of many small files go in directory order: DataLoader,
// tar, cp -r). Remembers the last complete listing of a bounded number of
// directories; a hint is only a guess, a stale one costs one wasted fetch.
// Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fuse/dir_listing.h"
#include "fuse/file_reader.h"

namespace bucketfs::fs {

class SiblingHints {
 public:
  explicit SiblingHints(size_t max_dirs = 64) : max_dirs_(max_dirs) {}

  // A complete listing of directory `dir` (bucket, key prefix `dir_key`).
  void Remember(Ino dir, const std::string& bucket, const std::string& dir_key,
                const std::vector<ListedEntry>& entries);
  // The same, with the entries read from `source` only when a file of `dir`
  // is opened (a walk that opens nothing pays nothing); nullopt: no hints.
  using EntriesSource = std::function<std::optional<std::vector<ListedEntry>>()>;
  void RememberLazy(Ino dir, const std::string& bucket, const std::string& dir_key,
                    EntriesSource source);
  // Up to `n` files listed after `name` in `dir`, nearest first.
  std::vector<ObjectVersion> After(Ino dir, const std::string& name, size_t n) const;
  // Records an open of `name` in `dir`; returns After(dir, name, n) only when
  // the opens of `dir` follow its listing order (`name` is listed within `n`
  // after one of the last kRecentOpens opens there), else nothing: a reader
  // in shuffled order would waste every fetch a hint starts.
  std::vector<ObjectVersion> AfterInOrder(Ino dir, const std::string& name, size_t n);
  static constexpr size_t kRecentOpens = 16;

 private:
  struct Listing {
    Mutex mu;                             // guards the fields below; taken without mu_
    EntriesSource source GUARDED_BY(mu);  // set until the index is built
    std::string bucket, dir_key;
    std::vector<ObjectVersion> files GUARDED_BY(mu);
    std::unordered_map<std::string, size_t> index GUARDED_BY(mu);  // name -> position in files
    std::deque<size_t> recent GUARDED_BY(mu);  // positions of the last opens, newest last
  };
  std::shared_ptr<Listing> Find(Ino dir) const;
  static void IndexLazily(Listing& l) REQUIRES(l.mu);
  // Where `name` stands among the listing's files (indexing it first).
  static std::optional<size_t> Position(Listing& l, const std::string& name) REQUIRES(l.mu);
  static std::vector<ObjectVersion> FilesAfter(const Listing& l, size_t pos, size_t n)
      REQUIRES(l.mu);
  static void Index(Listing& l, const std::vector<ListedEntry>& entries) REQUIRES(l.mu);
  void Insert(Ino dir, std::shared_ptr<Listing> listing);

  const size_t max_dirs_;
  mutable Mutex mu_;
  std::map<Ino, std::shared_ptr<Listing>> listings_ GUARDED_BY(mu_);
  std::deque<Ino> order_ GUARDED_BY(mu_);  // oldest first
};

}  // namespace bucketfs::fs
