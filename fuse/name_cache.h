// NameCache: what this mount knows about names, in memory, for the metadata
// TTL, so that lookups cost no request when the answer is already known.
//
// Per directory (bucket, key prefix ending in "/" or "") it holds:
// - answers about single names: S3's (a HEAD or a LIST said so) and this
//   mount's own changes (a file written, a name removed, a directory made),
//   each fresh for the TTL from when it was learned;
// - optionally, the directory's complete listing: while it is fresh, a name
//   that is not in it does not exist (no request, negative answers included).
//   A directory made by this mount starts with an empty complete listing.
// - a count of lookups that had to ask S3: once a directory has received
//   `misses_before_listing` of them within one TTL, ShouldList says "fetch its
//   listing" once, and later lookups are answered from it (listing-assisted
//   lookup, for directories of many files read in any order). A listing
//   that expired less than a TTL ago is refreshed at the first such lookup.
//
// What was learned about a name after a listing request started (this
// mount's changes, a HEAD) wins over that listing when it arrives
// (StoreListing's `started`), so a slow LIST never brings back a name this
// mount removed or hides one it wrote. A name absent from a listing whose
// own directory listing is held and not empty is a directory all the same
// (its children prove it; some stores leave such prefixes out).
//
// Memory is bounded by `max_names` across directories: the directories used
// least recently are dropped whole. Thread-safe; one mutex, never held
// across a request; the clock is injected for tests.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fuse/dir_listing.h"
#include "fuse/inode_table.h"

namespace bucketfs::fs {

class NameCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  struct Options {
    double ttl = 1.0;           // seconds an answer stays fresh; <= 0: nothing is kept
    double negative_ttl = 0.0;  // seconds a single "no such name" from S3 stays fresh
    size_t max_names = 1 << 20;
    int misses_before_listing = 4;  // 0: never fetch a listing for lookups
  };
  explicit NameCache(Options options, Clock clock = nullptr);

  struct Hit {
    bool missing = false;
    bool from_listing = false;  // missing because a held listing lacks it
    Kind kind = Kind::kFile;
    ObjectAttrs attrs;  // files
  };
  // What is known fresh about `name` in directory `dir_key`.
  std::optional<Hit> Find(const std::string& bucket, const std::string& dir_key,
                          const std::string& name);

  // Answers from S3 about one name, to a request sent at `asked` (a file's:
  // attrs.fetched). What was learned after that (this mount's own change
  // while the request was on its way) is newer and stays.
  void StoreFile(const std::string& bucket, const std::string& dir_key, const std::string& name,
                 const ObjectAttrs& attrs);
  void StoreDir(const std::string& bucket, const std::string& dir_key, const std::string& name,
                std::chrono::steady_clock::time_point asked);
  void StoreMissing(const std::string& bucket, const std::string& dir_key, const std::string& name,
                    std::chrono::steady_clock::time_point asked);
  // A complete listing of `dir_key` that S3 began to answer at `started`.
  void StoreListing(const std::string& bucket, const std::string& dir_key,
                    const std::vector<ListedEntry>& entries,
                    std::chrono::steady_clock::time_point started);
  // The fresh complete listing of `dir_key`, if held (entries in name order).
  std::optional<std::vector<ListedEntry>> Listing(const std::string& bucket,
                                                  const std::string& dir_key);

  // This mount's own changes: known at once, without asking S3.
  void Wrote(const std::string& bucket, const std::string& dir_key, const std::string& name,
             const ObjectAttrs& attrs);
  void Removed(const std::string& bucket, const std::string& dir_key, const std::string& name);
  // A directory `name` made in `dir_key`: it exists and is empty.
  void MadeDir(const std::string& bucket, const std::string& dir_key, const std::string& name);
  // `name` is unknown again, and so is whether the listing is complete (a
  // change that failed halfway).
  void Drop(const std::string& bucket, const std::string& dir_key, const std::string& name);
  // Everything at or under `dir_key` is unknown again (rmdir, directory rename).
  void ForgetTree(const std::string& bucket, const std::string& dir_key);

  // Counts a lookup in `dir_key` that asks S3. True (once, until
  // ListingDone) when the directory's listing should be fetched now.
  bool ShouldList(const std::string& bucket, const std::string& dir_key);
  // The listing asked for by ShouldList was stored or failed.
  void ListingDone(const std::string& bucket, const std::string& dir_key);

  size_t names() const;
  // Find calls answered from what is known, and those that were not.
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  enum class State { kFile, kDir, kMissing };
  struct Name {
    Name(State s, ObjectAttrs a, std::chrono::steady_clock::time_point when,
         std::chrono::steady_clock::time_point until)
        : state(s), attrs(std::move(a)), learned(when), expires(until) {}
    State state;
    ObjectAttrs attrs;                              // files
    std::chrono::steady_clock::time_point learned;  // when S3 said it or this mount did it
    std::chrono::steady_clock::time_point expires;
  };
  struct Dir {
    std::unordered_map<std::string, Name> names;
    std::chrono::steady_clock::time_point complete_until{};  // a complete listing is held
    std::chrono::steady_clock::time_point misses_since{};
    int misses = 0;
    bool listing = false;  // a listing for lookups is being fetched
    std::list<std::string>::iterator lru;
  };

  std::chrono::steady_clock::time_point Now() const;
  std::optional<Hit> FindLocked(const std::string& bucket, const std::string& dir_key,
                                const std::string& name) EXCLUDES(mu_);
  std::chrono::steady_clock::time_point Until(double seconds) const;
  static std::string DirId(const std::string& bucket, const std::string& dir_key);
  Dir& Touch(const std::string& id) REQUIRES(mu_);
  void Set(Dir& d, const std::string& name, Name n) REQUIRES(mu_);
  // Sets what is known of `name` in `dir_key`, learned at `learned`, for
  // `seconds` from now, unless what is held was learned later.
  void Record(const std::string& bucket, const std::string& dir_key, const std::string& name,
              State state, const ObjectAttrs& attrs, double seconds,
              std::chrono::steady_clock::time_point learned) REQUIRES(mu_);
  void Evict() REQUIRES(mu_);

  const Options options_;
  const Clock clock_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Dir> dirs_ GUARDED_BY(mu_);
  std::list<std::string> lru_ GUARDED_BY(mu_);  // directory ids, most recently used first
  size_t total_ GUARDED_BY(mu_) = 0;            // names held in every directory
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace bucketfs::fs
