// The glue from the core's FileWriter to upload/ (see staged_writer_factory.h).
#include "fuse/staged_writer_factory.h"

#include <spdlog/spdlog.h>

#include "upload/rolling_upload.h"
#include "upload/staged_upload.h"

namespace bucketfs::fs {
namespace {

class StagedWriter : public FileWriter {
 public:
  explicit StagedWriter(std::unique_ptr<upload::RollingUpload> upload)
      : upload_(std::move(upload)) {}
  Status Write(uint64_t offset, std::span<const std::byte> data) override {
    return upload_->Write(offset, data);
  }
  uint64_t size() const override { return upload_->size(); }
  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) override {
    return upload_->Read(offset, dest);
  }
  bool ReadsObject() const override { return upload_->ReadsObject(); }
  Result<CommittedObject> Sync() override { return upload_->Sync(); }
  Result<CommittedObject> Commit() override { return upload_->Commit(); }
  void Abort() override { upload_->Abort(); }
  Status Truncate(uint64_t size) override { return upload_->Truncate(size); }

 private:
  const std::unique_ptr<upload::RollingUpload> upload_;
};

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
  explicit StagedWriterFactory(upload::StagingContext context) : ctx_(std::move(context)) {}
  WriteBackUsage usage() const override {
    return {.buffer_bytes = ctx_.budget->used(),
            .buffer_limit = ctx_.budget->capacity(),
            .staging_bytes = ctx_.space->used()};
  }
  std::unique_ptr<FileWriter> Create(const std::string& bucket, const std::string& key) override {
    return Make(bucket, key, std::nullopt);
  }
  std::unique_ptr<FileWriter> CreateFrom(const std::string& bucket, const std::string& key,
                                         const BaseObject& base) override {
    return Make(bucket, key, base);
  }

 private:
  std::unique_ptr<FileWriter> Make(const std::string& bucket, const std::string& key,
                                   std::optional<BaseObject> base) {
    const bool over_base = base.has_value();
    auto upload = upload::StagedUpload::Open(ctx_, bucket, key, std::move(base));
    if (!upload.ok()) {
      spdlog::error("s3://{}/{}: {}", bucket, key, upload.error().ToString());
      return std::make_unique<FailedWriter>(upload.error());
    }
    return std::make_unique<StagedWriter>(
        std::make_unique<upload::RollingUpload>(ctx_, bucket, key, std::move(*upload), over_base));
  }

  const upload::StagingContext ctx_;
};

}  // namespace

namespace {

upload::StagingContext Context(std::shared_ptr<s3::ObjectClient> client, WriterOptions options,
                               std::string staging_dir, uint64_t memory_budget,
                               std::shared_ptr<memory::SpareMemory> spare_memory = nullptr) {
  upload::StagingOptions staging;
  staging.dir = std::move(staging_dir);
  staging.spare_memory = std::move(spare_memory);
  staging.memory_budget = memory_budget != 0 ? memory_budget : upload::DefaultMemoryBudget(options);
  return upload::MakeStagingContext(std::move(client), options, std::move(staging));
}

}  // namespace

std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(std::shared_ptr<s3::ObjectClient> client,
                                                           WriterOptions options,
                                                           std::string staging_dir,
                                                           uint64_t memory_budget) {
  return std::make_shared<StagedWriterFactory>(
      Context(std::move(client), options, std::move(staging_dir), memory_budget));
}

std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(
    std::shared_ptr<s3::ObjectClient> client, const FsConfig& config,
    std::shared_ptr<cache::DataCache> data_cache,
    std::shared_ptr<memory::SpareMemory> spare_memory) {
  upload::StagingContext ctx = Context(
      std::move(client), WriterOptions{config.write_part_size, config.max_upload_parts_in_flight},
      upload::DefaultStagingDir(config.cache_dir), config.max_upload_memory,
      std::move(spare_memory));
  ctx.data_cache = std::move(data_cache);
  return std::make_shared<StagedWriterFactory>(std::move(ctx));
}

}  // namespace bucketfs::fs
