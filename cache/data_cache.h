// DataCache: object bytes on local disk, shared by every mount and process
// that uses the same cache directory, laid out so that FUSE passthrough can
// hand a fully cached object's reads to the kernel.
//
// Layout under `dir` (0700): objects/ (0700) holds one sparse file (0600) per
// (scope, bucket, key, ETag), the object's size, named by a random name the
// index gives it; index/ is an LMDB environment with one CacheRecord per
// file (data_cache_record.h: present blocks, CRC32C of each, last use, the
// identity of the file when it was last verified) and the total of present
// bytes. One file per object version (not a pool of chunks) is what lets the
// kernel read a fully cached object straight from disk with passthrough; a
// changed object has a new ETag, so old bytes are never served for it.
//
// Integrity: every block is checked against its CRC32C before it is served;
// a bad block is dropped from the index (and fetched again by the caller),
// never served. A complete file is verified (all blocks read back) when it
// completes and whenever its stamp (inode, size, mtime, ctime) changed since:
// only then may the kernel read it without us (VerifiedComplete).
//
// Processes: LMDB serializes index updates across processes. A file is
// pinned by a shared flock(2) held by every CachedFile (readers, fills,
// passthrough opens); eviction takes the exclusive lock without waiting and
// skips files it cannot lock, deletes the record, then unlinks the file, so
// no process loses a file it is using. A file whose record is gone (or that
// another process replaced) is never read or filled. A process killed between
// a write and its index update leaves bytes the index does not list: they are
// fetched again; unlisted files are removed at the next Open.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "cache/data_cache_record.h"
#include "cache/lmdb_env.h"
#include "s3/object_version.h"
#include "s3/result.h"

namespace bucketfs::cache {

// Bump when the index or file layout changes: an old cache is wiped.
inline constexpr std::string_view kDataCacheFormat = "bucketfs-data-v1";

struct DataCacheOptions {
  std::string dir;    // created 0700
  std::string scope;  // names the server (as MetadataCacheOptions::scope)
  uint64_t max_bytes = 1ull << 30;
  // Fills stop while the file system holding `dir` has less free space.
  uint64_t min_free_bytes = 0;
  uint32_t block_size = 1u << 20;
  // Wall-clock nanoseconds (LRU order across processes). Empty: system_clock.
  std::function<int64_t()> clock;
};

struct DataCacheStats {
  uint64_t hits = 0;  // reads served from the cache
  uint64_t hit_bytes = 0;
  uint64_t misses = 0;              // reads that found blocks absent
  uint64_t filled_bytes = 0;        // bytes recorded by fills
  uint64_t refused_fills = 0;       // fills dropped for space
  uint64_t skipped_fill_bytes = 0;  // not written: the disk was behind the reader (best effort)
  uint64_t bad_blocks = 0;          // blocks whose checksum failed (dropped)
  uint64_t evicted_files = 0;
  uint64_t evicted_bytes = 0;
  uint64_t verified_files = 0;
};

class DataCache;

// One object version's cache file, pinned (shared flock) while this lives.
class CachedFile {
 public:
  ~CachedFile();
  CachedFile(const CachedFile&) = delete;
  CachedFile& operator=(const CachedFile&) = delete;

  // Copies [offset, offset + dest.size()) into `dest` when every block it
  // touches is present and matches its checksum. False is a miss: blocks
  // absent, or bad (then dropped from the index, never served).
  bool Read(uint64_t offset, std::span<std::byte> dest);
  // The checksums of consecutive blocks, from first_block on.
  struct BlockSums {
    uint64_t first_block = 0;
    uint32_t block_size = 0;
    std::vector<uint32_t> crcs;
  };
  // Copies `src`, the bytes at `offset`, to `dst` (at least as large) and
  // sums on the way every block a Fill of them would write: one pass over
  // the bytes where a copy then a Fill would make two.
  BlockSums CopyForFill(uint64_t offset, std::span<const std::byte> src,
                        std::span<std::byte> dst) const;
  // Stores bytes fetched at `offset`: the blocks they cover whole (or up to
  // the object's end) are written and recorded, within the size limit
  // (evicting others first). Blocks `sums` has (from CopyForFill of these
  // very bytes) are not summed again. Best effort: failures are logged, not
  // returned.
  void Fill(uint64_t offset, std::span<const std::byte> data, const BlockSums* sums = nullptr);
  // True when every block is present and the file was verified since it was
  // last written (verifying it now if not): the kernel may then read it.
  bool VerifiedComplete();
  // The open file (read-write), valid while this lives.
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  friend class DataCache;
  CachedFile(std::shared_ptr<DataCache> cache, std::string rkey, std::string file, std::string path,
             int fd);
  // Reads every block back and checks it; stamps the record when all match.
  bool VerifyAll(CacheRecord& rec);
  // A new descriptor of the file with O_DIRECT and `flags`, or -1 (the file
  // system refuses it, remembered for the whole cache).
  int OpenDirect(int flags) const;

  const std::shared_ptr<DataCache> cache_;
  const std::string rkey_;  // index key
  const std::string file_;  // name under objects/
  const std::string path_;
  const int fd_;
};

class DataCache : public std::enable_shared_from_this<DataCache> {
 public:
  // Opens (creating) the cache in options.dir; a damaged or foreign index is
  // wiped with its files. Recounts the total and removes unlisted files.
  static Result<std::shared_ptr<DataCache>> Open(DataCacheOptions options);
  ~DataCache();
  DataCache(const DataCache&) = delete;
  DataCache& operator=(const DataCache&) = delete;

  // The cache file of `v`, pinned while the result lives. `create`: make
  // its record and file when absent. Null when `v` cannot be cached (no
  // ETag, empty, key too long for the index), when absent and !create, or
  // on any failure (logged).
  std::shared_ptr<CachedFile> Acquire(const s3::ObjectVersion& v, bool create);

  // Evicts least recently used files that no process has pinned until the
  // total is at most `target`; returns the bytes it freed.
  uint64_t EvictTo(uint64_t target) EXCLUDES(evict_mu_);

  uint64_t TotalBytes() const;
  // The size limit of every process sharing the cache: set by the last one
  // to open it (logged when that changed it).
  uint64_t limit() const;
  const std::string& objects_dir() const { return objects_dir_; }
  DataCacheStats stats() const;
  // `bytes` a reader fetched were not written: the disk was behind (best-effort fills).
  void CountSkippedFill(uint64_t bytes) {
    counters_.skipped_fill_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }

 private:
  friend class CachedFile;
  friend class WriteFill;
  DataCache(DataCacheOptions options, std::unique_ptr<LmdbEnv> env);
  std::string RecordKey(const s3::ObjectVersion& v) const;
  std::optional<CacheRecord> GetRecord(const std::string& rkey) const;
  Status Recount();
  void RemoveUnlisted();
  void DropBlocks(const std::string& rkey, const std::string& file,
                  const std::vector<uint64_t>& blocks);
  bool LowOnSpace() const;
  // Adds `bytes` to the total when it stays within the limit (and the disk
  // has room); Unreserve takes them back. A process that dies in between
  // leaves the total high until the next Open recounts it.
  bool Reserve(uint64_t bytes);
  void Unreserve(uint64_t bytes);
  // Reserve, evicting least recently used files first when the total is too
  // high: down to 90% of `limit`, so that not every fill evicts.
  bool ReserveMakingRoom(uint64_t bytes, uint64_t limit);
  int64_t Now() const { return clock_(); }

  const DataCacheOptions options_;
  const std::function<int64_t()> clock_;
  const std::string objects_dir_;
  std::unique_ptr<LmdbEnv> env_;
  Mutex evict_mu_;  // one eviction at a time in this process

  struct Counters {
    std::atomic<uint64_t> hits{0}, hit_bytes{0}, misses{0}, filled_bytes{0}, refused_fills{0},
        bad_blocks{0}, evicted_files{0}, evicted_bytes{0}, verified_files{0}, skipped_fill_bytes{0};
  };
  mutable Counters counters_;
  std::atomic<bool> direct_io_refused_{false};
};

}  // namespace bucketfs::cache
