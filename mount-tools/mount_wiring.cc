#include "mount-tools/mount_wiring.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "fuse/prefetch_reader.h"
#include "fuse/staged_writer.h"
#include "prefetch/object_client_range_source.h"
#include "prefetch/prefetcher.h"

namespace bucketfs::tools {
namespace {

// Threads that answer READs which waited for a fetch (fuse/prefetch_reader.h):
// each reply through the page cache is a copy of up to 1 MiB by the kernel,
// and a part of 8 MiB completes several at once.
constexpr int kReplyThreads = 4;

prefetch::PrefetchConfig ReadPathConfig(const fs::FsConfig& config) {
  prefetch::PrefetchConfig pc;
  pc.part_size = config.read_part_size;
  pc.budget_bytes = config.max_memory;
  // A random read's GET may run on the FUSE thread that waits for it anyway;
  // two threads stay free for other requests.
  pc.max_fetches_on_caller =
      std::clamp(config.gets_on_fuse_threads, 0, std::max(0, config.max_threads - 2));
  if (config.direct_io) {
    // No kernel readahead: READs of one descriptor come one at a time, in
    // order, so no late READ needs the parts behind the reader.
    pc.backward_tolerance = 2 * pc.part_size;
    // The window is that reader's only readahead (prefetch_config.h).
    pc.grow_only_when_reads_wait = false;
  }
  return pc;
}

std::shared_ptr<fs::FileReaderFactory> BuildReaders(const std::shared_ptr<s3::ObjectClient>& client,
                                                    const fs::FsConfig& config) {
  if (!config.prefetch) return fs::MakeDirectReaderFactory(client);
  auto prefetcher = std::make_shared<prefetch::Prefetcher>(
      ReadPathConfig(config), std::make_shared<prefetch::ObjectClientRangeSource>(client));
  spdlog::info("read-ahead memory budget {} MiB", prefetcher->budget().limit() >> 20);
  return fs::MakePrefetchReaderFactory(std::move(prefetcher), kReplyThreads);
}

}  // namespace

fs::FsComponents BuildComponents(const std::shared_ptr<s3::ObjectClient>& client,
                                 const fs::FsConfig& config) {
  return fs::FsComponents{
      .readers = BuildReaders(client, config),
      .writers = fs::MakeStagedWriterFactory(
          client, fs::WriterOptions{config.write_part_size, config.max_upload_parts_in_flight},
          fs::DefaultStagingDir(config.cache_dir), config.max_upload_memory)};
}

std::unique_ptr<fs::Filesystem> BuildFilesystem(std::shared_ptr<s3::ObjectClient> client,
                                                const fs::FsConfig& config) {
  fs::FsComponents components = BuildComponents(client, config);
  return std::make_unique<fs::Filesystem>(std::move(client), config, std::move(components));
}

}  // namespace bucketfs::tools
