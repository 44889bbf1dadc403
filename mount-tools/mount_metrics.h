// The metrics of one mount: observers that turn what the S3 executor and the
// FUSE adapter report into series of a metrics::Registry, and the scrape-time
// readings of what the read path and the core already count. Built by the
// mount command, which passes the observers to the components it makes; the
// components themselves never see the registry. The names are listed in
// docs/MOUNTING.md.
#pragma once

#include <memory>

#include "cache/data_cache.h"
#include "fuse-adapter/fuse_observer.h"
#include "fuse/filesystem.h"
#include "memory/spare_memory.h"
#include "metrics/registry.h"
#include "prefetch/prefetcher.h"
#include "s3/request_observer.h"

namespace bucketfs::tools {

// Counts into `registry`, which must outlive what this returns.
std::shared_ptr<s3::RequestObserver> MakeS3Metrics(metrics::Registry& registry);
std::unique_ptr<fs::FuseObserver> MakeFuseMetrics(metrics::Registry& registry);

// The data cache's hits, fills, bad blocks, evictions and size.
void AddDataCacheMetrics(metrics::Registry& registry,
                         const std::shared_ptr<cache::DataCache>& cache);
// Series read from the prefetcher at scrape time (memory in use, fetched
// bytes, read hits and misses). Holds it weakly.
void AddPrefetchMetrics(metrics::Registry& registry,
                        const std::shared_ptr<prefetch::Prefetcher>& prefetcher);
// Series read from the core at scrape time (metadata cache hits and misses).
// REQUIRES: `filesystem` outlives every scrape.
void AddFilesystemMetrics(metrics::Registry& registry, const fs::Filesystem& filesystem);
// The part buffer memory both paths keep for their next parts. Holds it weakly.
void AddSpareMemoryMetrics(metrics::Registry& registry,
                           const std::shared_ptr<memory::SpareMemory>& spare);
// Gauges of the write-back's part buffers and staging disk use.
void AddWriteBackMetrics(metrics::Registry& registry,
                         const std::shared_ptr<fs::FileWriterFactory>& writers);

}  // namespace bucketfs::tools
