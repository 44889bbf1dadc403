// StagedWriter: the write-back writer. Every write, at any offset, lands in a
// local staging file (cache/staging_file.h); the file is cut into multipart
// parts (PartSizeFor: 16 MiB, growing to stay within 10,000 parts) and each
// part is uploaded from the staging file as soon as it is final, while the
// application keeps writing.
//
// Parts and their life:
// - Parts that a file's writes reach for the first time (over a base
//   object: at the part's start, the run that replaces its old bytes; see
//   below; the first part only when the file starts with a write of 128 KiB
//   or more: small files and small headers stay in the staging file) are
//   assembled in a part buffer instead of the staging
//   file ("filled in memory"): writes are copied straight into it (and summed while the bytes
//   are in the CPU cache, when they come in order), so nothing is read back.
//   When such a part goes out, the worker hands the buffer to the upload and
//   writes it to the staging file meanwhile (O_DIRECT where possible), so a
//   later write that seeks back into the part (zipfile, torch.save) finds it
//   there; such a write waits until that staging write is done. A part
//   uploaded at commit is not staged at all (nothing can change it any more).
//   Staging writes run on their own runner (StagingContext::stager), so the
//   upload of the next part never queues behind a disk write, and in pieces:
//   once Commit has sent its last parts, what is not yet staged is dropped
//   (no write can come back to it), so close() does not wait for the disk.
//   Fill buffers come from the budget (TakeFill) and fall back to the staging
//   file when they would pass half of it. The buffers: fuse/filled_parts.h.
// - A part is "final" once the end of the latest write is past its end (by a
//   small settle margin, so writes the kernel reorders do not cause
//   re-uploads). Final parts go out with UploadPartAsync, several in flight,
//   each read from the staging file into a buffer charged to an UploadBudget
//   (fuse/upload_budget.h) shared by all writers of the mount; when uploads lag, Write waits for a
//   slot (backpressure), so memory stays bounded.
// - The write that makes a part final only takes its slot and its buffer;
//   reading the part back and summing it (CRC32C/MD5 of 16 MiB) runs on the
//   mount's TaskRunner, so the application's next write() is not held up at
//   every part boundary. A failed read-back fails the part like a failed
//   upload.
// - A write that touches a part already sent bumps the part's generation; the
//   upload in flight (if any) finishes, its ETag is discarded, and the part is
//   sent again with the same part number, so the last ETag is the one used.
// - Commit uploads every part not yet clean, waits, and completes with parts
//   in ascending order; a file that fits in the first part is one PutObject.
//   Every body carries the configured checksum (WriterOptions::checksum,
//   CRC32C by default, else Content-MD5). Any failure aborts the multipart upload
//   (nothing appears under the key) and Commit returns the error.
// - Over a base object (open without O_TRUNC: append or in-place change), the
//   file starts as the object's bytes: a part never touched is copied server
//   side with UploadPartCopy (If-Match the base ETag) when it is allowed to
//   (whole part inside the base, or the last part); a part that is touched
//   gets the object's bytes the writes did not replace with a ranged GET
//   before it is sent. That GET waits while writes run in order from the
//   part's start (a rewrite of the whole part needs none) and happens at the
//   first write that leaves that run. A part whose run started it filling in
//   memory goes to the staging file then (or when it is sent before the run
//   covered its old bytes), so a rewrite from the start is filled in memory
//   like a new file.
// - Checksums over a base object: the upload uses the configured checksum
//   like a new file's, and Complete repeats, for a copied part, the CRC32C
//   the store reports in CopyPartResult (S3 does for an upload created with
//   CRC32C). A store that reports none (seen on the first copy): the writer
//   aborts that upload and starts again with Content-MD5 (its parts sent so
//   far are in the staging file and go again), and the mount remembers it
//   (StagingContext::copies_unsummed): later writers over a base choose MD5
//   when they create the upload if they will copy a part (at commit: an
//   untouched copyable part; while writing: one before the latest write's),
//   so a rewrite from the start keeps CRC32C there too.
//
// Thread-safe. Lock order: a writer's mu_, then the budget's, then its done_mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cache/staging_file.h"
#include "fuse/file_writer.h"
#include "fuse/task_runner.h"
#include "fuse/upload_budget.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

struct StagingOptions {
  std::string dir;                        // staging directory (created 0700)
  uint64_t memory_budget = 256ull << 20;  // part buffers in flight, all writers
  uint64_t disk_limit = 0;                // staging bytes of all writers; 0 = no limit
  uint64_t settle_bytes = 4ull << 20;     // how far past a part the writer must be
  int prepare_threads = 2;                // WorkerPool threads that prepare parts
  bool fill_in_memory = true;             // parts filled in memory (see above)
  // Staging writes of filled parts go in pieces of this size; Commit's cut
  // stops a part's write between pieces. 4 MiB pieces cost 2-4% more daemon
  // CPU than 16 MiB ones in a 1 GiB fio write (A/B, 5 rounds), so by default
  // a 16 MiB part goes whole and the cut drops only writes not yet started.
  uint64_t stage_piece = 16ull << 20;
  std::shared_ptr<cache::StagingFileOps> ops;  // tests inject faults here
};

// The shared state of one mount's writers.
struct StagingContext {
  std::shared_ptr<s3::ObjectClient> client;
  WriterOptions writer;
  StagingOptions staging;
  std::shared_ptr<UploadBudget> budget;
  std::shared_ptr<cache::StagingSpace> space;
  // Prepares parts for upload; null: on the thread that starts the part
  // (tests that want every upload started when Write returns).
  std::shared_ptr<TaskRunner> runner;
  // Writes parts filled in memory to the staging file while they upload;
  // null: on the thread that sends the part, after starting its upload.
  std::shared_ptr<TaskRunner> stager;
  // Closes staging files once their writer is done (freeing a large file's
  // blocks can wait on the disk); null: the runner, or at once without one.
  std::shared_ptr<TaskRunner> closer;
  // Set once the store has answered an UploadPartCopy into a CRC32C upload
  // without the part's CRC32C (see "Over a base object" above); null: each
  // writer learns it for itself.
  std::shared_ptr<std::atomic<bool>> copies_unsummed;
};

// A writer for s3://bucket/key. `base`: the object it starts from (append or
// in-place change); empty for a new file or O_TRUNC. If the staging file
// cannot be created, the writer fails every call with that error.
std::unique_ptr<FileWriter> MakeStagedWriter(const StagingContext& context,
                                             const std::string& bucket, const std::string& key,
                                             std::optional<BaseObject> base = std::nullopt);
// MakeStagedWriter's writer once its staging file exists (staged_writer.cc).
std::unique_ptr<FileWriter> NewStagedWriter(const StagingContext& context, std::string bucket,
                                            std::string key,
                                            std::unique_ptr<cache::StagingFile> staging,
                                            std::optional<BaseObject> base);

// The factory the mount uses (also implements CreateFrom for a base object).
// `memory_budget`: bytes of part buffers of all writers; 0 = 256 MiB, or
// two windows of parts (2 x max_parts_in_flight x part_size) if larger.
std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(std::shared_ptr<s3::ObjectClient> client,
                                                           WriterOptions options,
                                                           std::string staging_dir,
                                                           uint64_t memory_budget = 0);
std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(std::shared_ptr<s3::ObjectClient> client,
                                                           WriterOptions options,
                                                           StagingOptions staging);

// Where staging files go: <cache_dir>/staging, or without a cache directory
// /var/tmp/bucketfs-<uid>/staging.
std::string DefaultStagingDir(const std::string& cache_dir);

}  // namespace bucketfs::fs
