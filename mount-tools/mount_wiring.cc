#include "mount-tools/mount_wiring.h"

#include <spdlog/spdlog.h>

#include "fuse/prefetch_reader.h"
#include "fuse/staged_writer_factory.h"
#include "memory/memory_budget.h"
#include "mount-tools/mount_metrics.h"
#include "prefetch/object_client_range_source.h"
#include "prefetch/prefetcher.h"

namespace bucketfs::tools {
namespace {

// Threads that answer READs which waited for a fetch (fuse/prefetch_reader.h):
// each reply through the page cache is a copy of up to 1 MiB by the kernel,
// and a part of 8 MiB completes several at once.
constexpr int kReplyThreads = 4;

std::shared_ptr<fs::FileReaderFactory> BuildReaders(const std::shared_ptr<s3::ObjectClient>& client,
                                                    const fs::FsConfig& config,
                                                    metrics::Registry* registry) {
  if (!config.prefetch) return fs::MakeDirectReaderFactory(client);
  const prefetch::PrefetchConfig pc =
      prefetch::MountPrefetchConfig({.direct_io = config.direct_io,
                                     .part_size = config.read_part_size,
                                     .budget_bytes = config.max_memory,
                                     .fuse_threads = config.max_threads,
                                     .gets_on_fuse_threads = config.gets_on_fuse_threads});
  // The read path's budget (docs/DESIGN.md, "Memory"); the write-back makes
  // its own, a PartBufferBudget of config.max_upload_memory.
  auto budget = std::make_shared<memory::MemoryBudget>(
      pc.budget_bytes > 0 ? pc.budget_bytes : memory::MemoryBudget::DefaultBudgetBytes());
  auto prefetcher = std::make_shared<prefetch::Prefetcher>(
      pc, std::make_shared<prefetch::ObjectClientRangeSource>(client), std::move(budget));
  if (registry != nullptr) AddPrefetchMetrics(*registry, prefetcher);
  return fs::MakePrefetchReaderFactory(std::move(prefetcher), kReplyThreads);
}

}  // namespace

fs::FsComponents BuildComponents(const std::shared_ptr<s3::ObjectClient>& client,
                                 const fs::FsConfig& config, metrics::Registry* registry) {
  auto writers = fs::MakeStagedWriterFactory(client, config);
  if (registry != nullptr) AddWriteBackMetrics(*registry, writers);
  return fs::FsComponents{.readers = BuildReaders(client, config, registry),
                          .writers = std::move(writers)};
}

std::unique_ptr<fs::Filesystem> BuildFilesystem(std::shared_ptr<s3::ObjectClient> client,
                                                const fs::FsConfig& config,
                                                std::shared_ptr<handover::SessionJournal> journal,
                                                metrics::Registry* registry) {
  fs::FsComponents components = BuildComponents(client, config, registry);
  components.journal = std::move(journal);
  auto filesystem =
      std::make_unique<fs::Filesystem>(std::move(client), config, std::move(components));
  if (registry != nullptr) AddFilesystemMetrics(*registry, *filesystem);
  return filesystem;
}

}  // namespace bucketfs::tools
