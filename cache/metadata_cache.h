// MetadataCache: names, attributes and directory listings of S3 keys, kept in
// an LMDB environment (<cache_dir>/metadata) so that they survive remounts
// and reboots, and shared safely by every mount and process that uses the
// same cache directory.
//
// Records (each with the wall-clock time S3 said it, `fetched_at`):
// - name record, per (bucket, key without trailing "/"): a file (size, mtime,
//   ETag), a directory, or missing (a negative entry);
// - listing record, per (bucket, directory prefix): every entry of the
//   directory (name, kind, size, mtime, ETag) and whether it is complete.
// Keys are scope (the endpoint) + bucket + key, so two servers never mix.
// Keys too long for LMDB (511 bytes) are simply not cached.
//
// Freshness: a record is served while now - fetched_at < TTL; a TTL of
// kIndefiniteTtl or more never expires. Negative entries use their own TTL
// (0: not cached at all). Stale or undecodable records read as misses.
//
// Robustness: a format version record guards the file; a version mismatch, a
// corrupt or a truncated data file is logged as a warning and the
// environment is deleted and created anew. Nothing here is ever fatal to a
// mount: every failure reads as a miss.
//
// Local changes go through Invalidate/InvalidateTree, which drop the name
// record, the records below a directory and the parent's listing, so the
// next lookup or readdir asks S3 (or the local namespace) again.
//
// Thread-safe (LMDB transactions, MDB_NOTLS).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/lmdb_env.h"
#include "cache/metadata_records.h"
#include "s3/result.h"

namespace bucketfs::cache {

// TTLs at or above this never expire (mount-tools' "indefinite" is 1e9 s).
inline constexpr double kIndefiniteTtl = 1e9;
// Bump when the encoding of any record changes: old files are rebuilt.
inline constexpr std::string_view kMetadataFormat = "bucketfs-metadata-v1";

struct MetadataCacheOptions {
  std::string dir;    // the environment's directory, created 0700
  std::string scope;  // the endpoint (or anything naming the server)
  double ttl_seconds = 1;
  double negative_ttl_seconds = 0;
  // Wall-clock nanoseconds since the epoch (records outlive the process, so
  // not a steady clock). Empty: system_clock.
  std::function<int64_t()> clock;
  LmdbOptions lmdb;
};

class MetadataCache {
 public:
  static Result<std::unique_ptr<MetadataCache>> Open(MetadataCacheOptions options);

  // The fresh name record of `key` (no trailing "/"), or nullopt.
  std::optional<CachedName> GetName(const std::string& bucket, const std::string& key) const;
  // The name as its parent's fresh complete listing tells it: kMissing when
  // the listing does not hold it; nullopt when no such listing.
  std::optional<CachedName> GetNameFromListing(const std::string& bucket,
                                               const std::string& key) const;
  // `name.fetched_at_ns` 0 means now. A kMissing record is dropped silently
  // when negative entries are off.
  Status PutName(const std::string& bucket, const std::string& key, CachedName name);
  Status PutMissing(const std::string& bucket, const std::string& key);

  // The fresh complete listing of `dir_key` ("" or ending in "/"), or nullopt.
  std::optional<CachedListing> GetListing(const std::string& bucket,
                                          const std::string& dir_key) const;
  Status PutListing(const std::string& bucket, const std::string& dir_key, CachedListing listing);
  // Many listings in one transaction (one commit, one fsync): a flat listing
  // completes hundreds of directories at once.
  Status PutListings(const std::string& bucket,
                     std::vector<std::pair<std::string, CachedListing>> listings);
  // True when `dir_key` has a fresh complete listing; reads only its header.
  bool HasListing(const std::string& bucket, const std::string& dir_key) const;

  // A local change of `key` (a file, or a directory without its "/"): drops
  // its name record and its parent's listing.
  Status Invalidate(const std::string& bucket, const std::string& key);
  // A directory removed or renamed: also drops every record below it.
  Status InvalidateTree(const std::string& bucket, const std::string& dir_key);

  int64_t Now() const { return clock_(); }
  double ttl_seconds() const { return options_.ttl_seconds; }
  double negative_ttl_seconds() const { return options_.negative_ttl_seconds; }

 private:
  MetadataCache(MetadataCacheOptions options, std::unique_ptr<LmdbEnv> env);
  std::string RecordKey(char type, const std::string& bucket, const std::string& key) const;
  bool Fresh(int64_t fetched_at_ns, double ttl) const;
  // The record `type` of `bucket`/`key` as `decode` (std::string_view ->
  // std::optional<T>) reads it; nullopt when it is absent, does not decode,
  // cannot be read, or its key is too long for LMDB.
  template <typename Decode>
  auto ReadRecord(char type, const std::string& bucket, const std::string& key, Decode decode) const
      -> decltype(decode(std::string_view()));

  const MetadataCacheOptions options_;
  const std::function<int64_t()> clock_;
  std::unique_ptr<LmdbEnv> env_;
};

// Splits "a/b/c" into parent prefix "a/b/" and name "c" ("c" -> "" and "c").
std::pair<std::string, std::string> SplitParent(const std::string& key);

}  // namespace bucketfs::cache
