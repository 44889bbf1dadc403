// The mount's staging context and its defaults (see upload_context.h).
#include "upload/upload_context.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

namespace bucketfs::upload {

StagingContext MakeStagingContext(std::shared_ptr<s3::ObjectClient> client, WriterOptions options,
                                  StagingOptions staging) {
  StagingContext ctx;
  ctx.client = std::move(client);
  ctx.writer = options;
  // At least two parts: a part may take half (PartBufferBudget::Acquire).
  ctx.budget = std::make_shared<memory::PartBufferBudget>(
      std::max<uint64_t>(staging.memory_budget, 2 * options.part_size), staging.spare_memory);
  spdlog::info("write-back: {} MiB of part buffers, {} parts of {} MiB in flight per file",
               ctx.budget->capacity() >> 20, options.max_parts_in_flight, options.part_size >> 20);
  ctx.space = std::make_shared<cache::StagingSpace>(staging.disk_limit);
  ctx.runner = std::make_shared<base::WorkerPool>(staging.prepare_threads);
  // Apart from the runner: a disk write that stalls must not hold up the
  // next part's upload.
  ctx.stager = std::make_shared<base::WorkerPool>(staging.prepare_threads);
  // One thread: closes may wait on the disk, and nothing waits for them.
  ctx.closer = std::make_shared<base::WorkerPool>(1);
  ctx.copies_unsummed = std::make_shared<std::atomic<bool>>(false);
  ctx.staging = std::move(staging);
  if (Status s = cache::EnsureStagingDir(ctx.staging.dir); !s.ok()) {
    spdlog::error("staging directory: {}", s.error().ToString());
  }
  return ctx;
}

uint64_t DefaultMemoryBudget(const WriterOptions& options) {
  // Enough buffers for every writer's window, within reason.
  return std::max<uint64_t>(256ull << 20,
                            2ull * std::max(1, options.max_parts_in_flight) * options.part_size);
}

std::string DefaultStagingDir(const std::string& cache_dir) {
  if (!cache_dir.empty()) return cache_dir + "/staging";
  return "/var/tmp/bucketfs-" + std::to_string(::getuid()) + "/staging";
}

}  // namespace bucketfs::upload
