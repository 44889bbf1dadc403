// The mount's staged writer factory and its defaults (see staged_writer.h).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "fuse/staged_writer.h"

namespace bucketfs::fs {
namespace {

// Stands in for a writer whose staging file could not be created.
class FailedWriter : public FileWriter {
 public:
  explicit FailedWriter(Error e) : error_(std::move(e)) {}
  Status Write(uint64_t, std::span<const std::byte>) override { return error_; }
  uint64_t size() const override { return 0; }
  Result<CommittedObject> Commit() override { return error_; }
  void Abort() override {}

 private:
  const Error error_;
};

class StagedWriterFactory : public FileWriterFactory {
 public:
  explicit StagedWriterFactory(StagingContext context) : ctx_(std::move(context)) {
    if (Status s = cache::EnsureStagingDir(ctx_.staging.dir); !s.ok()) {
      spdlog::error("staging directory: {}", s.error().ToString());
    }
  }
  std::unique_ptr<FileWriter> Create(const std::string& bucket, const std::string& key) override {
    return MakeStagedWriter(ctx_, bucket, key);
  }
  std::unique_ptr<FileWriter> CreateFrom(const std::string& bucket, const std::string& key,
                                         const BaseObject& base) override {
    return MakeStagedWriter(ctx_, bucket, key, base);
  }

 private:
  const StagingContext ctx_;
};

}  // namespace

std::unique_ptr<FileWriter> MakeStagedWriter(const StagingContext& context,
                                             const std::string& bucket, const std::string& key,
                                             std::optional<BaseObject> base) {
  auto staging =
      cache::StagingFile::Create(context.staging.dir, context.staging.ops, context.space);
  if (!staging.ok()) {
    spdlog::error("s3://{}/{}: {}", bucket, key, staging.error().ToString());
    return std::make_unique<FailedWriter>(staging.error());
  }
  return NewStagedWriter(context, bucket, key, std::move(*staging), std::move(base));
}

std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(std::shared_ptr<s3::ObjectClient> client,
                                                           WriterOptions options,
                                                           StagingOptions staging) {
  StagingContext ctx;
  ctx.client = std::move(client);
  ctx.writer = options;
  // At least two parts: a part may take half (see UploadBudget::Acquire).
  ctx.budget = std::make_shared<UploadBudget>(
      std::max<uint64_t>(staging.memory_budget, 2 * options.part_size));
  spdlog::info("write-back: {} MiB of part buffers, {} parts of {} MiB in flight per file",
               ctx.budget->capacity() >> 20, options.max_parts_in_flight, options.part_size >> 20);
  ctx.space = std::make_shared<cache::StagingSpace>(staging.disk_limit);
  ctx.runner = std::make_shared<WorkerPool>(staging.prepare_threads);
  // Apart from the runner: a disk write that stalls must not hold up the
  // next part's upload (with 4 writers, the runner's threads spent their
  // time in O_DIRECT staging writes while parts waited to start).
  ctx.stager = std::make_shared<WorkerPool>(staging.prepare_threads);
  // One thread: closes may wait on the disk, and nothing waits for them.
  ctx.closer = std::make_shared<WorkerPool>(1);
  ctx.copies_unsummed = std::make_shared<std::atomic<bool>>(false);
  ctx.staging = std::move(staging);
  return std::make_shared<StagedWriterFactory>(std::move(ctx));
}

std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(std::shared_ptr<s3::ObjectClient> client,
                                                           WriterOptions options,
                                                           std::string staging_dir,
                                                           uint64_t memory_budget) {
  StagingOptions staging;
  staging.dir = std::move(staging_dir);
  // Enough buffers for every writer's window, within reason.
  staging.memory_budget =
      memory_budget != 0
          ? memory_budget
          : std::max<uint64_t>(256ull << 20,
                               2ull * std::max(1, options.max_parts_in_flight) * options.part_size);
  return MakeStagedWriterFactory(std::move(client), options, std::move(staging));
}

std::string DefaultStagingDir(const std::string& cache_dir) {
  if (!cache_dir.empty()) return cache_dir + "/staging";
  return "/var/tmp/bucketfs-" + std::to_string(::getuid()) + "/staging";
}

}  // namespace bucketfs::fs
