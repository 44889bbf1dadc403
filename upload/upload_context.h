// What a mount's staged uploads share: the options they run with, the memory
// and disk they draw from, and the runners their work moves to. Built once
// per mount (MakeStagingContext) and copied into every StagedUpload.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "base/task_runner.h"
#include "cache/data_cache.h"
#include "cache/staging_file.h"
#include "memory/part_buffer_budget.h"
#include "s3/object_client.h"

namespace bucketfs::upload {

// The object an upload has written.
struct CommittedObject {
  std::string etag;
  uint64_t size = 0;
};

// The object an upload starts from when a file is opened for writing without
// O_TRUNC (append, in-place change).
struct BaseObject {
  std::string etag;
  uint64_t size = 0;
};

struct WriterOptions {
  // First part size; grows to stay within s3::kMaxPartNumber parts (PartSizeFor).
  uint64_t part_size = 16ull << 20;
  int max_parts_in_flight = 4;
  // What each body carries for the server to verify (see StagedUpload on
  // uploads over an existing object).
  s3::BodyChecksum checksum = s3::BodyChecksum::kCrc32c;
};

struct StagingOptions {
  std::string dir;                        // staging directory (created 0700)
  uint64_t memory_budget = 256ull << 20;  // part buffers in flight, all writers
  uint64_t disk_limit = 0;                // staging bytes of all writers; 0 = no limit
  uint64_t settle_bytes = 4ull << 20;     // how far past a part the writer must be
  int prepare_threads = 2;                // WorkerPool threads that prepare parts
  bool fill_in_memory = true;             // parts filled in memory (see StagedUpload)
  // Staging writes of filled parts go in pieces of this size; Commit's cut
  // stops a part's write between pieces. By default a 16 MiB part goes
  // whole (smaller pieces cost CPU) and the cut drops only writes not yet started.
  uint64_t stage_piece = 16ull << 20;
  std::shared_ptr<cache::StagingFileOps> ops;  // tests inject faults here
  // Where part buffers go when given back, shared with the mount's read path
  // (memory/spare_memory.h); null: the budget keeps its own.
  std::shared_ptr<memory::SpareMemory> spare_memory;
};

// The shared state of one mount's writers.
struct StagingContext {
  std::shared_ptr<s3::ObjectClient> client;
  WriterOptions writer;
  StagingOptions staging;
  std::shared_ptr<memory::PartBufferBudget> budget;
  std::shared_ptr<cache::StagingSpace> space;
  // Prepares parts for upload; null: on the thread that starts the part
  // (tests that want every upload started when Write returns).
  std::shared_ptr<base::TaskRunner> runner;
  // Writes parts filled in memory to the staging file while they upload;
  // null: on the thread that sends the part, after starting its upload.
  std::shared_ptr<base::TaskRunner> stager;
  // Closes staging files once their writer is done (freeing a large file's
  // blocks can wait on the disk); null: the runner, or at once without one.
  std::shared_ptr<base::TaskRunner> closer;
  // Set once the store has answered an UploadPartCopy into a CRC32C upload
  // without the part's CRC32C (see MultipartUpload); null: each writer learns
  // it for itself.
  std::shared_ptr<std::atomic<bool>> copies_unsummed;
  // The mount's data cache, or null: each upload also puts the bytes it
  // sends there (cache/write_fill.h), so reading back what was just written
  // needs no GET.
  std::shared_ptr<cache::DataCache> data_cache;
};

// The context a mount runs with: a budget of at least two parts, worker
// pools for preparing, staging and closing, and the staging directory made.
StagingContext MakeStagingContext(std::shared_ptr<s3::ObjectClient> client, WriterOptions options,
                                  StagingOptions staging);

// The part-buffer memory when the mount sets none: 256 MiB, or two windows of
// parts (2 x max_parts_in_flight x part_size) if larger.
uint64_t DefaultMemoryBudget(const WriterOptions& options);

// Where staging files go: <cache_dir>/staging, or without a cache directory
// /var/tmp/bucketfs-<uid>/staging.
std::string DefaultStagingDir(const std::string& cache_dir);

}  // namespace bucketfs::upload
