// StagingStore: the staging file of one staged upload (cache/staging_file.h)
// and what runs against it off the writer's thread: reading a part back for
// its upload (summed as it is read), and writing a part filled in memory to
// the file in pieces until the cut. Disk space is accounted by the file's
// StagingSpace; Release gives it back at once and leaves the close (which
// may wait on the disk) to a runner.
//
// The cut: once Cut is called nothing will read the file for parts already
// sent (Commit has sent its last parts, or the upload was dropped), so
// staging writes stop at their next piece, and a piece that fails after the
// cut is not an error.
//
// Thread contract: the owner serializes Reserve, Write, Truncate and
// Release (it holds its mutex); ReadSummed, WritePieces and Cut may run on
// other threads at the same time. Shared (shared_ptr) by the owner and its
// tasks, since a staging write may outlive the commit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "base/task_runner.h"
#include "cache/staging_file.h"
#include "s3/result.h"

namespace bucketfs::upload {

class StagingStore {
 public:
  explicit StagingStore(std::unique_ptr<cache::StagingFile> file) : file_(std::move(file)) {}

  // The space limit's ENOSPC for bytes up to `end` before any of them lands.
  Status Reserve(uint64_t end) { return file_->Reserve(end); }
  Status Write(uint64_t offset, std::span<const std::byte> data) {
    return file_->Write(offset, data);
  }
  Status Truncate(uint64_t size) { return file_->Truncate(size); }
  cache::StagingFile& file() { return *file_; }

  // Fills `dest` from `offset` and advises the pages out of the cache; with
  // `crc32c`, returns the bytes' CRC32C, summed piece by piece while each is
  // still in the CPU cache.
  Result<std::optional<uint32_t>> ReadSummed(uint64_t offset, std::span<std::byte> dest,
                                             bool crc32c);

  // What WritePieces did: an error, or that the cut stopped it.
  struct Staged {
    Status status = Status::Ok();
    bool cut = false;
    std::optional<Error> unneeded;  // a piece that failed after the cut (not an error)
  };
  // Writes `data` (a part filled in memory) at `offset`, `piece` bytes at a
  // time, until the cut.
  Staged WritePieces(uint64_t offset, std::span<const std::byte> data, uint64_t piece);

  void Cut() { cut_.store(true, std::memory_order_release); }
  bool cut() const { return cut_.load(std::memory_order_acquire); }

  // Cuts, frees the file's disk space now and drops the owner's reference on
  // `closer` (at once without one): the file closes when its last staging
  // write ends. REQUIRES: the owner calls nothing after it.
  static void Release(std::shared_ptr<StagingStore> store, base::TaskRunner* closer);

 private:
  const std::unique_ptr<cache::StagingFile> file_;
  std::atomic<bool> cut_{false};
};

}  // namespace bucketfs::upload
