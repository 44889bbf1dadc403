// What DataCache and CachedFile share inside cache/: the index's running
// total and whole-buffer file I/O. Not for use outside cache/.
#ifndef CACHE_DATA_CACHE_INTERNAL_H_
#define CACHE_DATA_CACHE_INTERNAL_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cache/data_cache.h"
#include "cache/lmdb_env.h"

namespace bucketfs::cache::data_cache_internal {

// The longest record key the index takes (LMDB's default key limit).
inline constexpr size_t kMaxRecordKey = 511;

// O_DIRECT transfers must start, end and sit in memory at multiples of this
// (the largest logical block size in common use).
inline constexpr uint64_t kDirectAlign = 4096;
inline bool DirectAligned(const void* p, uint64_t offset, uint64_t len) {
  return reinterpret_cast<uintptr_t>(p) % kDirectAlign == 0 && offset % kDirectAlign == 0 &&
         len % kDirectAlign == 0;
}

// A new random name for a file under objects/.
std::string RandomName();

// The bytes all cache files hold (and fills have reserved), kept in the index.
uint64_t GetTotal(const LmdbTxn& t);
Status PutTotal(LmdbTxn& t, uint64_t total);
// The size limit every process sharing the cache keeps to (the last one to
// open it set it); `fallback` when none is recorded.
uint64_t GetLimit(const LmdbTxn& t, uint64_t fallback);
Status PutLimit(LmdbTxn& t, uint64_t limit);

// What identifies a file's content as last verified: a write changes it.
FileStamp StampOf(const struct stat& st);

// pread/pwrite of all `len` bytes (EINTR retried); false on an error or end of file.
// Reads until `need` bytes are in, asking for up to `ask` (>= need) bytes:
// an O_DIRECT read asks for whole blocks and may stop short at the file's end.
bool PreadAtLeast(int fd, std::byte* out, uint64_t need, uint64_t ask, uint64_t offset);
bool PreadAll(int fd, std::byte* out, size_t len, uint64_t offset);
bool PwriteAll(int fd, const std::byte* in, size_t len, uint64_t offset);

}  // namespace bucketfs::cache::data_cache_internal

#endif  // CACHE_DATA_CACHE_INTERNAL_H_
