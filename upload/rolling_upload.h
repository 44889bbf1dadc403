// RollingUpload: one file open for writing over its whole life, as a series
// of versions. The current version is a StagedUpload; Sync (fsync, or the
// close of one descriptor while others still write) commits it, so the
// object exists with every byte written so far, and the file stays
// writable: the next write or truncate starts a new StagedUpload over the
// version just committed, whose unchanged parts are copied server side.
// Commit ends the series (later writes fail with EBADF).
//
// Reads see the file's current bytes: the current StagedUpload's, or,
// between versions and after the end, the last committed object's (a
// ranged GET pinned to its ETag).
//
// A failed Sync or Commit aborts that version (nothing new appears under
// the key; an earlier version stays) and every later call returns the error.
//
// Thread-safe: calls are serialized (a StagedUpload serializes its writes
// anyway); size() never waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "upload/staged_upload.h"
#include "upload/upload_context.h"

namespace bucketfs::upload {

class RollingUpload {
 public:
  // The series of s3://bucket/key that starts as `first`; `over_base`: it
  // was opened over the object as it is (not a new file or O_TRUNC).
  RollingUpload(StagingContext context, std::string bucket, std::string key,
                std::unique_ptr<StagedUpload> first, bool over_base);
  ~RollingUpload();
  RollingUpload(const RollingUpload&) = delete;
  RollingUpload& operator=(const RollingUpload&) = delete;

  Status Write(uint64_t offset, std::span<const std::byte> data) EXCLUDES(mu_);
  Status Truncate(uint64_t size) EXCLUDES(mu_);
  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) EXCLUDES(mu_);
  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // Reads may need the object in S3: the file was opened over it, or a Sync
  // made a version of it.
  bool ReadsObject() const EXCLUDES(mu_);

  // Commits what was written since the last version (nothing when nothing
  // was: no request); the file stays writable.
  Result<CommittedObject> Sync() EXCLUDES(mu_);
  // The same, and ends the series. Idempotent.
  Result<CommittedObject> Commit() EXCLUDES(mu_);
  // Drops the current version (no object appears for it) and ends the series.
  void Abort() EXCLUDES(mu_);

 private:
  // The StagedUpload to write to: the current one, or a new one over the
  // last version. REQUIRES: not ended.
  Result<StagedUpload*> Current() REQUIRES(mu_);
  Result<CommittedObject> SyncLocked() REQUIRES(mu_);
  Result<size_t> ReadCommitted(uint64_t offset, std::span<std::byte> dest) REQUIRES(mu_);

  const StagingContext ctx_;
  const std::string bucket_, key_;
  const bool over_base_;
  std::atomic<uint64_t> size_{0};

  mutable Mutex mu_;
  std::unique_ptr<StagedUpload> current_ GUARDED_BY(mu_);  // null between versions
  std::optional<CommittedObject> last_ GUARDED_BY(mu_);    // the latest version in S3
  std::optional<Error> error_ GUARDED_BY(mu_);             // a version failed
  bool ended_ GUARDED_BY(mu_) = false;                     // Commit or Abort ran
};

}  // namespace bucketfs::upload
