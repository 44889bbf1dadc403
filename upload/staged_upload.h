// StagedUpload: write-back of one file. Every write, at any offset, lands in
// a local staging file (StagingStore); the file is cut into multipart parts
// (PartLayout: 16 MiB, growing to stay within s3::kMaxPartNumber parts) and
// each part is uploaded from the staging file as soon as it is final, while
// the application keeps writing.
//
// Its parts: PartTable (what each part holds and where it is on its way),
// StagingStore (the local file), FilledParts (parts assembled in memory),
// MultipartUpload (the S3 side) and the mount's PartBufferBudget (part memory).
//
// Parts and their life:
// - Parts that a file's writes reach for the first time (over a base
//   object: at the part's start, the run that replaces its old bytes; the
//   first part only when the file starts with a write of 128 KiB or more:
//   small files and small headers stay in the staging file) are assembled in
//   a part buffer instead of the staging file ("filled in memory"): writes
//   are copied straight into it (and summed while the bytes are in the CPU
//   cache, when they come in order), so nothing is read back. When such a
//   part goes out, the buffer goes to the upload and is written to the
//   staging file meanwhile, on the stager, so a later write that seeks back
//   into the part (zipfile, torch.save) finds it there; such a write waits
//   until that staging write is done. A part uploaded at commit is not
//   staged at all. Once Commit has sent its last parts, what is not yet
//   staged is dropped (the cut), so close() does not wait for the disk.
//   Fill buffers fall back to the staging file when they would pass half of
//   the budget.
// - A part is "final" once the end of the latest write is past its end (by a
//   small settle margin, so writes the kernel reorders do not cause
//   re-uploads). Final parts go out with UploadPartAsync, several in flight,
//   each read from the staging file into a buffer charged to the budget;
//   when uploads lag, Write waits for a slot (backpressure).
// - The write that makes a part final only takes its slot and its buffer;
//   reading the part back and summing it runs on the runner, so the
//   application's next write() is not held up at every part boundary. A
//   failed read-back fails the part like a failed upload.
// - A write that touches a part already sent bumps the part's generation;
//   the upload in flight (if any) finishes, its ETag is discarded, and the
//   part is sent again with the same part number.
// - Commit uploads every part not yet clean, waits, and completes with parts
//   in ascending order; a file that fits in the first part is one PutObject.
//   Any failure aborts the multipart upload (nothing appears under the key)
//   and Commit returns the error.
// - Over a base object (open without O_TRUNC: append or in-place change), the
//   file starts as the object's bytes: a part never touched is copied server
//   side (If-Match the base ETag) when it is allowed to (whole part inside
//   the base, or the last part); a part that is touched gets the base bytes
//   the writes did not replace with a ranged GET before it is sent. That GET
//   waits while writes run in order from the part's start (a rewrite of the
//   whole part needs none) and happens at the first write that leaves that
//   run. A part whose run started it filling in memory goes to the staging
//   file then, so a rewrite from the start is filled in memory like a new file.
// - Checksums over a base object: see MultipartUpload. A writer over a base
//   chooses MD5 when it creates the upload if the mount has seen copies
//   without CRC32C and it will copy a part (at commit: an untouched copyable
//   part; while writing: one before the latest write's).
//
// - Read serves the file's current bytes to readers of a file being
//   written, without changing any part's state (an untouched part stays
//   copyable): part buffers, the staging file, and the base object for
//   what no write replaced.
//
// - With a data cache in the context, every part's bytes also go into it as
//   they are sent (cache::WriteFill), and a successful commit records them
//   under the new object's ETag.
//
// Commit is idempotent; after it Write fails with EBADF. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "cache/write_fill.h"
#include "upload/filled_parts.h"
#include "upload/multipart_upload.h"
#include "upload/part_layout.h"
#include "upload/part_table.h"
#include "upload/staging_store.h"
#include "upload/upload_context.h"

namespace bucketfs::upload {

class StagedUpload {
 public:
  // An upload of s3://bucket/key. `base`: the object it starts from (append
  // or in-place change); empty for a new file or O_TRUNC. Fails with the
  // staging file's error when it cannot be created.
  static Result<std::unique_ptr<StagedUpload>> Open(const StagingContext& context,
                                                    const std::string& bucket,
                                                    const std::string& key,
                                                    std::optional<BaseObject> base = std::nullopt);
  StagedUpload(const StagingContext& context, std::string bucket, std::string key,
               std::unique_ptr<cache::StagingFile> staging, std::optional<BaseObject> base);
  // Aborts an upload not committed; waits for its parts still on their way.
  ~StagedUpload();
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;

  // Writes at any offset; a hole reads as zeros.
  Status Write(uint64_t offset, std::span<const std::byte> data) EXCLUDES(mu_, done_mu_);
  // Bytes accepted so far: the size the file shows while it is written.
  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // Sets the file's size (ftruncate while writing). Shrinking leaves a part
  // no write touched untouched, so it is still copied server side.
  Status Truncate(uint64_t new_size) EXCLUDES(mu_, done_mu_);
  // The file's bytes as written so far (staged_upload_read.cc): from part
  // buffers, the staging file and, for bytes no write replaced, the base
  // object (a ranged GET of its pinned ETag). Returns the bytes read (short
  // only at the end). EBADF once committed.
  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) EXCLUDES(mu_, done_mu_);
  Result<CommittedObject> Commit() EXCLUDES(mu_, done_mu_);
  // Drops the upload: no object is created, multipart parts are discarded.
  void Abort() EXCLUDES(mu_, done_mu_);

 private:
  // A part on its way: the buffer is given back when both the upload and
  // (for a part filled in memory) its staging write are done with it.
  struct Sending {
    memory::PartBuffer body;
    std::atomic<int> users{1};
  };

  // The write path (staged_upload.cc).
  Status CheckWritable() REQUIRES(mu_) EXCLUDES(done_mu_);
  Status Fail(const Error& e) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status WritePart(int i, uint64_t at, std::span<const std::byte> data) REQUIRES(mu_)
      EXCLUDES(done_mu_);
  bool CanFill(int i, uint64_t at, uint64_t n) REQUIRES(mu_) EXCLUDES(done_mu_);
  bool Untouched(int i) EXCLUDES(done_mu_);
  void WaitStaged(int i) REQUIRES(mu_) EXCLUDES(done_mu_);
  uint64_t BaseEnd(int i) const REQUIRES(mu_);
  bool ExtendsPrefix(int i, uint64_t lo, uint64_t hi) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status Materialize(int i) REQUIRES(mu_) EXCLUDES(done_mu_);
  std::optional<Error> StickyError() EXCLUDES(done_mu_);
  // Reading (staged_upload_read.cc).
  Status ReadPart(int i, uint64_t at, std::span<std::byte> dest) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status ReadWritten(int i, uint64_t at, std::span<std::byte> dest) REQUIRES(mu_)
      EXCLUDES(done_mu_);

  // Sending parts (staged_upload_parts.cc). The tasks run on the runner and
  // the stager, and completions on the client's threads: they take only
  // done_mu_.
  // Whether part `i` is complete and the latest write (ending at `cursor`)
  // has moved far enough past it to send it.
  bool Eligible(int i, uint64_t cursor) const;
  Status Pump(bool all, int limit = 0) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status StartPart(int i, bool final) REQUIRES(mu_) EXCLUDES(done_mu_);
  // `fill` (may be null) gets the part's bytes before they go out.
  void SendFilled(const std::shared_ptr<StagingStore>& staging, cache::WriteFill* fill,
                  const std::shared_ptr<Sending>& job, s3::UploadPartParams p, int i, uint64_t gen,
                  uint64_t start, bool stage, std::optional<uint32_t> sum) EXCLUDES(mu_, done_mu_);
  void SendStaged(StagingStore& staging, cache::WriteFill* fill,
                  const std::shared_ptr<Sending>& job, s3::UploadPartParams p, int i, uint64_t gen,
                  uint64_t start) EXCLUDES(mu_, done_mu_);
  void StageFilled(StagingStore& staging, const std::shared_ptr<Sending>& job, int i,
                   uint64_t start) EXCLUDES(mu_, done_mu_);
  void PartDone(Sending& job, int i, uint64_t gen, const Result<s3::UploadPartResult>& r)
      EXCLUDES(done_mu_);
  void Unuse(Sending& job);
  void WaitForUploads() EXCLUDES(done_mu_);
  void WaitForStagingWrites() EXCLUDES(done_mu_);
  void WaitForAllParts() EXCLUDES(done_mu_);

  // Commit and abort (staged_upload_commit.cc).
  Result<CommittedObject> CommitLocked() REQUIRES(mu_) EXCLUDES(done_mu_);
  Status SendEveryPart(int n) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status PrepareUntouched(int n) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status CopyOrStageUntouched(int n) REQUIRES(mu_) EXCLUDES(done_mu_);
  Result<CommittedObject> PutWhole(uint64_t total) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status EnsureUpload(int n) REQUIRES(mu_) EXCLUDES(done_mu_);
  s3::BodyChecksum UploadChecksum(int n) REQUIRES(mu_) EXCLUDES(done_mu_);
  Status RestartWithMd5(int n) REQUIRES(mu_) EXCLUDES(done_mu_);
  bool CanCopy(int i, int n) const REQUIRES(mu_);
  Status CopyPart(int i) REQUIRES(mu_) EXCLUDES(done_mu_);
  Error Abandon(const Error& e) REQUIRES(mu_) EXCLUDES(done_mu_);
  void AbortLocked() REQUIRES(mu_) EXCLUDES(done_mu_);
  void ReleaseStaging() REQUIRES(mu_);

  const StagingContext ctx_;
  const PartLayout layout_;
  const std::string bucket_;
  const std::string key_;
  std::atomic<uint64_t> size_{0};

  // Serializes Write, Truncate, Commit and Abort; held across S3 calls,
  // staging I/O and waits for upload slots. Lock order: mu_, then the
  // budget's, then done_mu_.
  Mutex mu_;
  // Null once committed; shared with staging writes that may outlive Commit.
  std::shared_ptr<StagingStore> staging_ GUARDED_BY(mu_);
  std::optional<BaseObject> base_ GUARDED_BY(mu_);
  MultipartUpload upload_ GUARDED_BY(mu_);
  uint64_t cursor_ GUARDED_BY(mu_) = 0;  // end of the latest write
  bool modified_ GUARDED_BY(mu_) = false;
  std::optional<Result<CommittedObject>> committed_ GUARDED_BY(mu_);
  FilledParts fills_ GUARDED_BY(mu_);  // parts filled in memory, not yet sent

  // The bytes sent, put in the data cache; null without one or once committed.
  std::shared_ptr<cache::WriteFill> cache_fill_ GUARDED_BY(mu_);

  // Guards what upload completions and staging writes (other threads)
  // touch; never held across a call that may block.
  Mutex done_mu_;
  CondVar cv_;  // a part's upload or staging write ended
  PartTable parts_ GUARDED_BY(done_mu_);
};

}  // namespace bucketfs::upload
