// The mount's FileWriterFactory: each writer is an upload::StagedUpload
// (upload/staged_upload.h) behind the core's FileWriter interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cache/data_cache.h"
#include "fuse/file_writer.h"
#include "fuse/fs_config.h"
#include "memory/spare_memory.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

// Writers of one mount, staging in `staging_dir` (upload::DefaultStagingDir).
// `memory_budget`: bytes of part buffers of all writers; 0 =
// upload::DefaultMemoryBudget. A writer whose staging file cannot be created
// fails every call with that error. Implements CreateFrom for a base object.
std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(std::shared_ptr<s3::ObjectClient> client,
                                                           WriterOptions options,
                                                           std::string staging_dir,
                                                           uint64_t memory_budget = 0);
// The same, with the part size, parts in flight, staging directory and memory
// budget the mount's `config` sets. `data_cache` (may be null): where each
// upload also puts the bytes it sends (upload::StagingContext::data_cache).
// `spare_memory` (may be null): part buffers shared with the read path
// (upload::StagingOptions::spare_memory).
std::shared_ptr<FileWriterFactory> MakeStagedWriterFactory(
    std::shared_ptr<s3::ObjectClient> client, const FsConfig& config,
    std::shared_ptr<cache::DataCache> data_cache = nullptr,
    std::shared_ptr<memory::SpareMemory> spare_memory = nullptr);

}  // namespace bucketfs::fs
