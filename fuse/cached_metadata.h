// CachedMetadata: the filesystem core's view of the persistent metadata cache
// (cache/metadata_cache.h). It speaks the core's types (ObjectAttrs,
// ListedEntry, full S3 keys) and hides the cache's record format; every
// failure inside reads as a miss, so the core never depends on the cache.
//
// The core asks it before S3 (Find, Listing), tells it what S3 answered
// (StoreFile/StoreDir/StoreMissing/StoreListing), and reports local changes
// at once (Changed, ChangedTree) so this mount always sees its own writes.
//
// Made only when the mount has a cache directory and a positive
// metadata TTL; otherwise the core holds no CachedMetadata at all.
// Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/metadata_cache.h"
#include "fuse/dir_listing.h"
#include "fuse/fs_config.h"
#include "fuse/inode_table.h"

namespace bucketfs::fs {

class CachedMetadata {
 public:
  // Null when `config` has no cache_dir or metadata_ttl <= 0, or when the
  // cache cannot be opened (a warning says why; the mount goes on without).
  static std::unique_ptr<CachedMetadata> Open(const FsConfig& config);
  explicit CachedMetadata(std::unique_ptr<cache::MetadataCache> cache) : cache_(std::move(cache)) {}

  struct Hit {
    bool missing = false;  // a fresh negative answer
    Kind kind = Kind::kFile;
    ObjectAttrs attrs;  // files; `fetched` set from the record's age
  };
  // What the cache knows fresh about `file_key` (a name without "/"): its own
  // record first, else its parent's complete listing.
  std::optional<Hit> Find(const std::string& bucket, const std::string& file_key) const;
  struct DirEntries {
    std::vector<ListedEntry> entries;
    std::chrono::steady_clock::time_point fetched;  // when S3 said it, on the steady clock
  };
  // A fresh complete listing of `dir_key`.
  std::optional<DirEntries> Listing(const std::string& bucket, const std::string& dir_key) const;

  void StoreFile(const std::string& bucket, const std::string& file_key, const ObjectAttrs& attrs);
  void StoreDir(const std::string& bucket, const std::string& file_key);
  void StoreMissing(const std::string& bucket, const std::string& file_key);
  void StoreListing(const std::string& bucket, const std::string& dir_key,
                    const std::vector<ListedEntry>& entries);
  // Many complete listings (dir key, entries) in one cache transaction.
  void StoreListings(const std::string& bucket,
                     const std::vector<std::pair<std::string, std::vector<ListedEntry>>>& dirs);
  // A fresh complete listing of `dir_key` exists (cheaper than Listing).
  bool HasListing(const std::string& bucket, const std::string& dir_key) const {
    return cache_->HasListing(bucket, dir_key);
  }

  // `key` was created, written, removed or renamed here: a file key, or a
  // directory key ending in "/". ChangedTree also drops everything below a
  // directory (rmdir, directory rename).
  void Changed(const std::string& bucket, const std::string& key);
  void ChangedTree(const std::string& bucket, const std::string& dir_key);

 private:
  ObjectAttrs ToAttrs(const cache::CachedName& n) const;

  std::unique_ptr<cache::MetadataCache> cache_;
};

}  // namespace bucketfs::fs
