// WriteFill: the bytes of an object this mount is writing, put in the data
// cache as its parts are uploaded, so that reading back what was just
// written (a checkpoint saved, then loaded) comes from local disk and not
// from the store, without a GET.
//
// The cache keys a file by the object's ETag, which is known only once the
// upload completes. So the bytes go into a new file under objects/ with the
// CRC32C of every block, and Publish records that file under the version the
// upload created. A part sent again (a write changed it) replaces what an
// earlier send of it left; a block is recorded only when it came whole from
// the part's latest send. Parts the upload never had locally (copied server
// side from the object the file started from) are absent: reads fetch them.
//
// Unpublished, the file is removed when this is destroyed; after a crash, the
// next DataCache::Open removes it as unlisted. Space is reserved in the
// cache's total as bytes come, within its size limit (evicting like a read
// fill); a write larger than the cache can hold is not cached. Best effort:
// a failure is logged and leaves the object uncached, never wrong.
//
// The bytes go through the page cache, unlike a read fill's: what was just
// written is what is likely read back soon (a checkpoint loaded again), and
// then its check and its reads find it in memory.
//
// Thread-safe: parts may come from several threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "cache/data_cache.h"

namespace bucketfs::cache {

class WriteFill {
 public:
  explicit WriteFill(std::shared_ptr<DataCache> cache);
  // Removes the file and gives its reserved space back unless published.
  ~WriteFill();
  WriteFill(const WriteFill&) = delete;
  WriteFill& operator=(const WriteFill&) = delete;

  // The bytes of part `part` at `offset` as sent in that part's send `gen`
  // (a later send has a higher one). A send older than one already seen is
  // ignored.
  void Part(int part, uint64_t gen, uint64_t offset, std::span<const std::byte> data) EXCLUDES(mu_);

  // Records the file under `v` (the object the upload created, v.size its
  // size) with every block whose bytes came whole from its part's latest
  // send. Returns whether a record was made; false when nothing was cached,
  // the version cannot be cached (no ETag) or the cache holds it already.
  bool Publish(const s3::ObjectVersion& v) EXCLUDES(mu_);

 private:
  struct BlockSum {
    uint32_t crc = 0;
    uint64_t end = 0;  // the block's bytes end here (short only at the object's end)
    int part = 0;
    uint64_t gen = 0;
  };
  // Opens the file on the first part; false once writing it failed.
  bool Ready() REQUIRES(mu_);
  // Reserves room for `bytes` more in the cache's total, evicting if needed.
  bool ReserveSpace(uint64_t bytes) REQUIRES(mu_);
  void Abandon(const char* why) REQUIRES(mu_);
  void Discard() REQUIRES(mu_);

  const std::shared_ptr<DataCache> cache_;
  Mutex mu_;
  std::string file_ GUARDED_BY(mu_);  // name under objects/; empty until the first part
  int fd_ GUARDED_BY(mu_) = -1;
  bool failed_ GUARDED_BY(mu_) = false;
  bool published_ GUARDED_BY(mu_) = false;
  uint64_t reserved_ GUARDED_BY(mu_) = 0;
  std::map<int, uint64_t> part_gen_ GUARDED_BY(mu_);       // latest send of each part
  std::map<int, uint64_t> part_reserved_ GUARDED_BY(mu_);  // bytes reserved for each part
  std::map<uint64_t, BlockSum> blocks_ GUARDED_BY(mu_);    // by block index
};

}  // namespace bucketfs::cache
