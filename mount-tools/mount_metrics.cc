#include "mount-tools/mount_metrics.h"

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "metrics/indexed_counters.h"

namespace bucketfs::tools {
namespace {

using metrics::Counter;
using metrics::Gauge;
using metrics::Histogram;
using metrics::IndexedCounters;
using metrics::Registry;

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// Operations that carry a file's bytes to S3: "uploads in flight".
bool IsUpload(s3::S3Op op) {
  return op == s3::S3Op::kPut || op == s3::S3Op::kUploadPart || op == s3::S3Op::kUploadPartCopy ||
         op == s3::S3Op::kCompleteMultipart;
}

class S3Metrics final : public s3::RequestObserver {
 public:
  explicit S3Metrics(Registry& r)
      : received_(r.GetCounter("bucketfs_s3_received_bytes_total",
                               "Response body bytes received from S3.")),
        sent_(r.GetCounter("bucketfs_s3_sent_bytes_total", "Request body bytes sent to S3.")),
        uploads_(r.GetGauge("bucketfs_uploads_in_flight",
                            "Upload requests (PutObject, UploadPart, UploadPartCopy, "
                            "CompleteMultipartUpload) in flight.")),
        throttled_(r.GetCounter("bucketfs_s3_throttled_total",
                                "S3 answers that asked to slow down (503, 429, SlowDown).")),
        paced_(r.GetCounter("bucketfs_s3_paced_requests_total",
                            "S3 attempts that waited for a start slot of the paced rate.")),
        pace_rate_(r.GetGauge("bucketfs_s3_paced_rate",
                              "Requests per second the bucket's requests are paced at, learned "
                              "from throttling; 0: not paced.")) {
    for (int i = 0; i < s3::kS3OpCount; ++i) {
      const metrics::Labels op = {{"op", std::string(s3::S3OpName(static_cast<s3::S3Op>(i)))}};
      ops_[i].by_status = std::make_unique<IndexedCounters>(
          r, "bucketfs_s3_requests_total",
          "HTTP requests sent to S3 (each attempt), by operation and HTTP status (0: no "
          "response).",
          op, "status", 600);
      ops_[i].retries = &r.GetCounter("bucketfs_s3_retries_total",
                                      "S3 attempts that failed and were tried again.", op);
      ops_[i].latency = &r.GetHistogram(
          "bucketfs_s3_request_duration_seconds",
          "Time from sending an S3 request to the end of its response, per attempt.",
          metrics::LatencyBuckets(), op);
      ops_[i].in_flight = &r.GetGauge("bucketfs_s3_requests_in_flight",
                                      "S3 requests sent and not yet answered (including "
                                      "retries waiting for their backoff).",
                                      op);
    }
  }

  void OnAttemptStart(s3::S3Op op) override {
    At(op).in_flight->Add(1);
    if (IsUpload(op)) uploads_.Add(1);
  }

  void OnAttemptEnd(s3::S3Op op, int http_status, std::chrono::nanoseconds latency,
                    uint64_t bytes_in, uint64_t bytes_out) override {
    PerOp& o = At(op);
    o.in_flight->Add(-1);
    if (IsUpload(op)) uploads_.Add(-1);
    o.by_status->Add(http_status < 0 ? 0 : static_cast<size_t>(http_status));
    o.latency->Observe(Seconds(latency));
    received_.Add(bytes_in);
    sent_.Add(bytes_out);
  }

  void OnRetry(s3::S3Op op) override { At(op).retries->Add(); }
  void OnThrottled(s3::S3Op) override { throttled_.Add(); }
  void OnPaced(std::chrono::nanoseconds) override { paced_.Add(); }
  void OnPaceRate(double requests_per_second) override {
    pace_rate_.Set(std::lround(requests_per_second));
  }

 private:
  struct PerOp {
    std::unique_ptr<IndexedCounters> by_status;
    Counter* retries = nullptr;
    Histogram* latency = nullptr;
    Gauge* in_flight = nullptr;
  };
  PerOp& At(s3::S3Op op) { return ops_[static_cast<size_t>(op)]; }

  std::array<PerOp, s3::kS3OpCount> ops_;
  Counter& received_;
  Counter& sent_;
  Gauge& uploads_;
  Counter& throttled_;
  Counter& paced_;
  Gauge& pace_rate_;
};

// "ENOENT" for 2: what an operator greps for.
std::string ErrnoName(size_t e) {
  const char* name = strerrorname_np(static_cast<int>(e));
  return name != nullptr ? name : std::to_string(e);
}

class FuseMetrics final : public fs::FuseObserver {
 public:
  explicit FuseMetrics(Registry& r)
      : read_(r.GetCounter("bucketfs_fuse_read_bytes_total",
                           "Bytes returned to applications by FUSE READ.")),
        written_(r.GetCounter("bucketfs_fuse_write_bytes_total",
                              "Bytes accepted from applications by FUSE WRITE.")) {
    for (int i = 0; i < fs::kFuseOpCount; ++i) {
      const metrics::Labels op = {{"op", std::string(fs::FuseOpName(static_cast<fs::FuseOp>(i)))}};
      ops_[i].count =
          &r.GetCounter("bucketfs_fuse_ops_total", "FUSE operations answered, by type.", op);
      ops_[i].latency = &r.GetHistogram("bucketfs_fuse_op_duration_seconds",
                                        "Time from a FUSE request to its answer, by type.",
                                        metrics::LatencyBuckets(), op);
      ops_[i].errors = std::make_unique<IndexedCounters>(
          r, "bucketfs_fuse_errors_total", "Error replies to the kernel, by operation and errno.",
          op, "errno", 256, ErrnoName);
    }
  }

  void OnOp(fs::FuseOp op, std::chrono::nanoseconds latency) override {
    PerOp& o = ops_[static_cast<size_t>(op)];
    o.count->Add();
    o.latency->Observe(Seconds(latency));
  }
  void OnError(fs::FuseOp op, int errno_value) override {
    ops_[static_cast<size_t>(op)].errors->Add(errno_value < 0 ? 0
                                                              : static_cast<size_t>(errno_value));
  }
  void OnRead(uint64_t bytes) override { read_.Add(bytes); }
  void OnWrite(uint64_t bytes) override { written_.Add(bytes); }

 private:
  struct PerOp {
    Counter* count = nullptr;
    Histogram* latency = nullptr;
    std::unique_ptr<IndexedCounters> errors;
  };
  std::array<PerOp, fs::kFuseOpCount> ops_;
  Counter& read_;
  Counter& written_;
};

}  // namespace

std::shared_ptr<s3::RequestObserver> MakeS3Metrics(Registry& registry) {
  return std::make_shared<S3Metrics>(registry);
}

std::unique_ptr<fs::FuseObserver> MakeFuseMetrics(Registry& registry) {
  return std::make_unique<FuseMetrics>(registry);
}

void AddDataCacheMetrics(Registry& registry, const std::shared_ptr<cache::DataCache>& cache) {
  std::weak_ptr<cache::DataCache> weak = cache;
  auto stat = [weak](uint64_t cache::DataCacheStats::*field) {
    return [weak, field]() -> double {
      auto c = weak.lock();
      return c ? static_cast<double>(c->stats().*field) : 0;
    };
  };
  using S = cache::DataCacheStats;
  registry.AddCounterFn("bucketfs_data_cache_reads_total",
                        "Fetches served from the local data cache (hit) or not (miss).",
                        {{"result", "hit"}}, stat(&S::hits));
  registry.AddCounterFn("bucketfs_data_cache_reads_total", "", {{"result", "miss"}},
                        stat(&S::misses));
  registry.AddCounterFn("bucketfs_data_cache_hit_bytes_total", "Bytes served from the data cache.",
                        {}, stat(&S::hit_bytes));
  registry.AddCounterFn("bucketfs_data_cache_filled_bytes_total",
                        "Bytes written into the data cache on their way to a reader.", {},
                        stat(&S::filled_bytes));
  registry.AddCounterFn("bucketfs_data_cache_bad_blocks_total",
                        "Cached blocks whose checksum failed (dropped and fetched again).", {},
                        stat(&S::bad_blocks));
  registry.AddCounterFn("bucketfs_data_cache_evicted_bytes_total",
                        "Bytes evicted from the data cache.", {}, stat(&S::evicted_bytes));
  registry.AddCounterFn("bucketfs_data_cache_refused_fills_total",
                        "Fills dropped because the cache or its disk was full.", {},
                        stat(&S::refused_fills));
  registry.AddCounterFn("bucketfs_data_cache_skipped_fill_bytes_total",
                        "Fetched bytes not written into the data cache because the disk was "
                        "behind the readers (--cache-fill best-effort).",
                        {}, stat(&S::skipped_fill_bytes));
  registry.AddGaugeFn("bucketfs_data_cache_bytes",
                      "Bytes in the data cache (every process sharing the directory).", {},
                      [weak]() -> double {
                        auto c = weak.lock();
                        return c ? static_cast<double>(c->TotalBytes()) : 0;
                      });
}

void AddPrefetchMetrics(Registry& registry,
                        const std::shared_ptr<prefetch::Prefetcher>& prefetcher) {
  std::weak_ptr<prefetch::Prefetcher> weak = prefetcher;
  auto stat = [weak](uint64_t prefetch::PrefetcherStats::*field) {
    return [weak, field]() -> double {
      auto p = weak.lock();
      return p ? static_cast<double>(p->stats().*field) : 0;
    };
  };
  using S = prefetch::PrefetcherStats;
  registry.AddGaugeFn("bucketfs_memory_in_use_bytes",
                      "Read-ahead buffer memory held (the --max-memory budget in use).", {},
                      stat(&S::budget_used));
  registry.AddGaugeFn("bucketfs_memory_limit_bytes", "The read-ahead memory budget.", {},
                      [weak]() -> double {
                        auto p = weak.lock();
                        return p ? static_cast<double>(p->budget().limit()) : 0;
                      });
  registry.AddCounterFn("bucketfs_prefetch_fetched_bytes_total",
                        "Bytes the read path asked S3 for (read-ahead and demand).", {},
                        stat(&S::bytes_fetched));
  registry.AddCounterFn("bucketfs_prefetch_reads_total",
                        "Reads answered from bytes already fetched (hit) or that waited for a "
                        "fetch (miss).",
                        {{"result", "hit"}}, stat(&S::read_hits));
  registry.AddCounterFn("bucketfs_prefetch_reads_total", "", {{"result", "miss"}},
                        stat(&S::read_misses));
  registry.AddCounterFn("bucketfs_prefetch_wasted_bytes_total",
                        "Bytes fetched ahead and dropped before any read was served from them.", {},
                        stat(&S::wasted_bytes));
  registry.AddCounterFn(
      "bucketfs_prefetch_hint_hits_total",
      "Opens that adopted a small file fetched ahead (sibling hint or read order).", {},
      stat(&S::hint_hits));
}

void AddSpareMemoryMetrics(Registry& registry, const std::shared_ptr<memory::SpareMemory>& spare) {
  std::weak_ptr<memory::SpareMemory> weak = spare;
  registry.AddGaugeFn("bucketfs_spare_memory_bytes",
                      "Part buffer memory neither reads nor writes use now, kept for their next "
                      "parts.",
                      {}, [weak]() -> double {
                        auto s = weak.lock();
                        return s ? static_cast<double>(s->bytes()) : 0;
                      });
}

void AddFilesystemMetrics(Registry& registry, const fs::Filesystem& filesystem) {
  const fs::Filesystem* f = &filesystem;
  registry.AddCounterFn("bucketfs_metadata_cache_lookups_total",
                        "Name lookups answered from the metadata cache (hit) or not (miss).",
                        {{"result", "hit"}},
                        [f] { return static_cast<double>(f->name_cache_hits()); });
  registry.AddCounterFn("bucketfs_metadata_cache_lookups_total", "", {{"result", "miss"}},
                        [f] { return static_cast<double>(f->name_cache_misses()); });
  registry.AddGaugeFn("bucketfs_inodes",
                      "Inodes the kernel holds a lookup on, root included (its forgets lower it).",
                      {}, [f] { return static_cast<double>(f->inodes().size()); });
  registry.AddGaugeFn("bucketfs_open_handles", "Handles open now, by kind.", {{"kind", "file"}},
                      [f] { return static_cast<double>(f->open_handles().files); });
  registry.AddGaugeFn("bucketfs_open_handles", "", {{"kind", "dir"}},
                      [f] { return static_cast<double>(f->open_handles().dirs); });
  using B = fs::Filesystem::BackgroundUploads;
  auto background = [f](uint64_t B::*field) {
    return [f, field] { return static_cast<double>(f->background_uploads().*field); };
  };
  registry.AddCounterFn("bucketfs_background_uploads_total",
                        "--async-close uploads after close(), by outcome.",
                        {{"result", "succeeded"}}, background(&B::succeeded));
  registry.AddCounterFn("bucketfs_background_uploads_total", "", {{"result", "failed"}},
                        background(&B::failed));
  registry.AddCounterFn("bucketfs_background_uploads_kept_total",
                        "Failed --async-close uploads whose bytes were kept on local disk.", {},
                        background(&B::kept));
}

void AddWriteBackMetrics(Registry& registry,
                         const std::shared_ptr<fs::FileWriterFactory>& writers) {
  std::weak_ptr<fs::FileWriterFactory> weak = writers;
  auto usage = [weak](uint64_t fs::WriteBackUsage::*field) {
    return [weak, field]() -> double {
      auto w = weak.lock();
      return w ? static_cast<double>(w->usage().*field) : 0;
    };
  };
  using U = fs::WriteBackUsage;
  registry.AddGaugeFn("bucketfs_upload_memory_in_use_bytes",
                      "Part buffers held by uploads (the --max-upload-memory budget in use).", {},
                      usage(&U::buffer_bytes));
  registry.AddGaugeFn("bucketfs_upload_memory_limit_bytes", "The uploads' part buffer budget.", {},
                      usage(&U::buffer_limit));
  registry.AddGaugeFn("bucketfs_staging_bytes",
                      "Bytes of files being written held in staging files on local disk.", {},
                      usage(&U::staging_bytes));
}

}  // namespace bucketfs::tools
