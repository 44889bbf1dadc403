#include "mount-tools/mount_wiring.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "fuse/prefetch_reader.h"
#include "fuse/staged_writer_factory.h"
#include "memory/memory_budget.h"
#include "memory/spare_memory.h"
#include "mount-tools/mount_metrics.h"
#include "prefetch/caching_range_source.h"
#include "prefetch/object_client_range_source.h"
#include "prefetch/prefetcher.h"
#include "upload/upload_context.h"

namespace bucketfs::tools {
namespace {

// Threads that answer READs which waited for a fetch (fuse/prefetch_reader.h):
// each reply through the page cache is a copy of up to 1 MiB by the kernel,
// and a part of 8 MiB completes several at once.
constexpr int kReplyThreads = 4;
// Threads that read cache hits and write fills (prefetch/caching_range_source.h).
constexpr int kCacheThreads = 4;
// Fills stop while the cache's file system has less than this share free,
// whatever the size limit: room for everything else on that disk.
constexpr double kCacheMinFreeFraction = 0.05;

// The data cache under config.cache_dir/data, or null (not asked for, or it
// cannot be opened: the mount then reads without it, and says so).
std::shared_ptr<cache::DataCache> OpenDataCache(const fs::FsConfig& config) {
  if (config.cache_dir.empty() || !config.data_cache) return nullptr;
  // The first component to use the cache directory makes it, private.
  if (::mkdir(config.cache_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    spdlog::warn("data cache off: cannot create {}: {}", config.cache_dir, std::strerror(errno));
    return nullptr;
  }
  struct statvfs vfs {};
  if (::statvfs(config.cache_dir.c_str(), &vfs) != 0) {
    spdlog::warn("data cache off: cannot stat {}: {}", config.cache_dir, std::strerror(errno));
    return nullptr;
  }
  const double fs_bytes = static_cast<double>(vfs.f_blocks) * static_cast<double>(vfs.f_frsize);
  cache::DataCacheOptions o;
  o.dir = config.cache_dir + "/data";
  o.scope = config.cache_scope;
  o.max_bytes = config.max_cache_bytes > 0
                    ? config.max_cache_bytes
                    : static_cast<uint64_t>(fs_bytes * config.max_cache_percent / 100);
  o.min_free_bytes = static_cast<uint64_t>(fs_bytes * kCacheMinFreeFraction);
  auto opened = cache::DataCache::Open(o);
  if (!opened.ok()) {
    spdlog::warn("data cache in {} not used: {}", o.dir, opened.error().ToString());
    return nullptr;
  }
  spdlog::info("data cache {}: limit {} MiB (holding {} MiB), fills stop below {} MiB free", o.dir,
               o.max_bytes >> 20, (*opened)->TotalBytes() >> 20, o.min_free_bytes >> 20);
  return *opened;
}

std::shared_ptr<fs::FileReaderFactory> BuildReaders(
    const std::shared_ptr<s3::ObjectClient>& client, const fs::FsConfig& config,
    std::shared_ptr<cache::DataCache> data_cache, std::shared_ptr<memory::SpareMemory> spare_memory,
    metrics::Registry* registry) {
  if (!config.prefetch) return fs::MakeDirectReaderFactory(client);
  const prefetch::PrefetchConfig pc =
      prefetch::MountPrefetchConfig({.direct_io = config.direct_io,
                                     .part_size = config.read_part_size,
                                     .budget_bytes = config.max_memory,
                                     .fuse_threads = config.max_threads,
                                     .gets_on_fuse_threads = config.gets_on_fuse_threads,
                                     .random_whole_max = config.random_whole_max});
  // The read path's budget (docs/DESIGN.md, "Memory"); the write-back makes
  // its own, a PartBufferBudget of config.max_upload_memory. Both take fresh
  // part buffers from `spare_memory` first.
  auto budget = std::make_shared<memory::MemoryBudget>(
      pc.budget_bytes > 0 ? pc.budget_bytes : memory::MemoryBudget::DefaultBudgetBytes());
  std::shared_ptr<prefetch::RangeSource> source =
      std::make_shared<prefetch::ObjectClientRangeSource>(client);
  if (data_cache != nullptr) {
    source = std::make_shared<prefetch::CachingRangeSource>(
        std::move(source), data_cache, kCacheThreads, config.read_part_size, budget,
        config.cache_fill_best_effort ? prefetch::CachingRangeSource::FillMode::kBestEffort
                                      : prefetch::CachingRangeSource::FillMode::kComplete);
    if (registry != nullptr) AddDataCacheMetrics(*registry, data_cache);
  }
  auto prefetcher = std::make_shared<prefetch::Prefetcher>(pc, std::move(source), std::move(budget),
                                                           std::move(spare_memory));
  if (registry != nullptr) AddPrefetchMetrics(*registry, prefetcher);
  return fs::MakePrefetchReaderFactory(std::move(prefetcher), kReplyThreads, std::move(data_cache));
}

}  // namespace

fs::FsComponents BuildComponents(const std::shared_ptr<s3::ObjectClient>& client,
                                 const fs::FsConfig& config, metrics::Registry* registry) {
  // One data cache for both sides: reads fill it, and so do writes, so that
  // what this mount wrote is read back from local disk.
  auto data_cache = config.prefetch ? OpenDataCache(config) : nullptr;
  // Part buffers one side leaves are the other's next ones: a load right
  // after a save then reuses the save's memory instead of faulting in more.
  // It keeps what the write path alone kept before: its budget's worth.
  const uint64_t spare_bytes =
      config.max_upload_memory != 0
          ? config.max_upload_memory
          : upload::DefaultMemoryBudget(
                {config.write_part_size, config.max_upload_parts_in_flight});
  auto spare_memory = std::make_shared<memory::SpareMemory>(spare_bytes);
  if (registry != nullptr) AddSpareMemoryMetrics(*registry, spare_memory);
  auto writers = fs::MakeStagedWriterFactory(client, config, data_cache, spare_memory);
  if (registry != nullptr) AddWriteBackMetrics(*registry, writers);
  return fs::FsComponents{.readers = BuildReaders(client, config, std::move(data_cache),
                                                  std::move(spare_memory), registry),
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
