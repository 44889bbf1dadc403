// StagingFile: the local file that holds the bytes of one file being written
// through the mount, so that writes may land at any offset (zipfile, tar and
// HDF5 seek back to rewrite headers) while final parts are read back and
// uploaded. Files live in <dir> (created 0700 if missing), are created 0600
// and unlinked from the start (O_TMPFILE, else mkstemp + unlink), so a crash
// leaves nothing behind and nobody else can open them.
//
// Disk use is accounted in a StagingSpace shared by every staging file of a
// mount: the logical size (highest byte written) of each open file. A write
// that would take the total past the limit fails with ENOSPC, as does one the
// disk refuses; I/O errors carry EIO. Reads past the end and of holes give
// zeros.
//
// All system calls go through StagingFileOps so tests can inject ENOSPC/EIO.
// Thread-compatible: the owner serializes Write and Truncate (the writer
// holds its mutex). Read and DropCached may run on other threads at the same
// time (the writer prepares parts on worker threads): they touch no state
// Write changes, and a Read that overlaps a Write may see either bytes (the
// writer discards such a read by the part's generation).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "s3/result.h"

namespace bucketfs::cache {

// The seam for the few system calls a staging file makes.
class StagingFileOps {
 public:
  virtual ~StagingFileOps() = default;
  virtual ssize_t PWrite(int fd, const void* buf, size_t n, off_t offset);
  virtual ssize_t PRead(int fd, void* buf, size_t n, off_t offset);
  virtual int FTruncate(int fd, off_t size);
  // An anonymous file in `dir` (O_TMPFILE), or -1 with errno.
  virtual int OpenTmpFile(const char* dir);
  // The named-file fallback of Create, for filesystems without O_TMPFILE.
  virtual int Unlink(const char* path);
};

// Disk bytes used by all staging files of a mount, and the limit (0: none).
class StagingSpace {
 public:
  explicit StagingSpace(uint64_t limit = 0) : limit_(limit) {}
  // Reserves `bytes` more; false when that would pass the limit.
  bool TryAdd(uint64_t bytes);
  void Sub(uint64_t bytes);
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
};

class StagingFile {
 public:
  // Creates an anonymous staging file in `dir`. `ops`/`space` may be null
  // (plain system calls, no accounting).
  static Result<std::unique_ptr<StagingFile>> Create(const std::string& dir,
                                                     std::shared_ptr<StagingFileOps> ops,
                                                     std::shared_ptr<StagingSpace> space);
  ~StagingFile();
  StagingFile(const StagingFile&) = delete;
  StagingFile& operator=(const StagingFile&) = delete;

  // Writes all of `data` at `offset`. ENOSPC / EIO (errno kept) on failure.
  Status Write(uint64_t offset, std::span<const std::byte> data);
  // Counts the logical size up to `end` (the space limit's ENOSPC, as Write)
  // for bytes the owner holds in memory and writes later with WriteBuffered.
  Status Reserve(uint64_t end) { return Grow(end); }
  // Writes `data` (a part the writer assembled in memory) at `offset`,
  // within what Reserve counted. Where the file system allows it, the
  // page-aligned bulk goes with O_DIRECT from the caller's buffer: no page
  // cache pages to allocate, copy into, write back and evict (a buffered
  // staging write and its eviction were a third of the daemon's CPU in a
  // sequential write). Otherwise, or for an unaligned head or tail, a
  // buffered write followed by DropCached. May run beside Write, Read and
  // WriteBuffered of other ranges.
  Status WriteBuffered(uint64_t offset, std::span<const std::byte> data);
  // Fills all of `dest` from `offset`; bytes never written read as zeros.
  Status Read(uint64_t offset, std::span<std::byte> dest);
  // Advice: the bytes in [offset, offset + len) were just read for an upload
  // and are unlikely to be read again soon. Starts writing them to disk and
  // drops earlier such ranges from the page cache once written, so a large
  // sequential file keeps a few parts of page cache instead of all of it
  // (fresh page cache costs far more CPU than reused pages). Never fails.
  void DropCached(uint64_t offset, uint64_t len);
  // Sets the logical size (shrinking frees the bytes past `size`).
  Status Truncate(uint64_t size);
  // Highest byte offset written + 1 (or the truncated size).
  uint64_t size() const { return size_; }
  // Gives the file's bytes back to the StagingSpace now, ahead of the
  // destructor (which may then run later, on another thread). No Write,
  // Reserve or Truncate may follow.
  void ReleaseSpace();

 private:
  StagingFile(int fd, int direct_fd, std::shared_ptr<StagingFileOps> ops,
              std::shared_ptr<StagingSpace> space)
      : fd_(fd), direct_fd_(direct_fd), ops_(std::move(ops)), space_(std::move(space)) {}
  Status Grow(uint64_t new_size);
  Status PWriteAll(int fd, uint64_t offset, std::span<const std::byte> data);

  const int fd_;
  const int direct_fd_;                // the same file opened O_DIRECT; -1 when not possible
  std::atomic<bool> direct_ok_{true};  // cleared when the file system refuses O_DIRECT
  const std::shared_ptr<StagingFileOps> ops_;
  const std::shared_ptr<StagingSpace> space_;
  uint64_t size_ = 0;
  bool space_released_ = false;
  Mutex drain_mu_;
  // Ranges given to DropCached whose pages may still be under writeback.
  std::vector<std::pair<uint64_t, uint64_t>> draining_ GUARDED_BY(drain_mu_);
};

// Creates `dir` (and parents) with mode 0700 when missing.
Status EnsureStagingDir(const std::string& dir);

}  // namespace bucketfs::cache
