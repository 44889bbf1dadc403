// `bucketfs s3 bench list s3://BUCKET[/PREFIX] [--parallel N]`: how fast the
// direct client enumerates every key under a prefix; the yardstick of the
// metadata walk benchmark (fio-jobs/harness/find_bench.sh).
//
// --parallel 1: one flat ListObjectsV2 (no delimiter) from the prefix, one
//   request in flight, 1000 keys a request.
// --parallel N: the shape of the mount's listing prefetcher
//   (fuse/listing_prefetcher.h), so that both use the same parallelism: the
//   prefix's first level is listed with "/" (its files counted there), its
//   subdirectories are cut into 4*N contiguous key ranges queued in key
//   order, and N threads each list one range at a time flat, from just after
//   the range's first subdirectory name to the next range's first key.
// Keys are only counted (nothing printed, no per-key work): this measures the
// client and the server, not a consumer. Reported: keys, wall seconds, keys/s,
// requests, CPU seconds of the process; --json prints one JSON line.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "mount-tools/bench_stats.h"
#include "mount-tools/s3_cli.h"
#include "mount-tools/s3_url.h"

namespace bucketfs::tools {
namespace {

struct ListBenchOptions {
  std::string url;
  int parallel = 1;
  bool json = false;
};

struct Counts {
  std::atomic<uint64_t> keys{0};
  std::atomic<uint64_t> requests{0};
};

// Lists flat from `start_after` until a key >= `end` ("" = to the end of
// `prefix`), counting keys; `nested_only`: only keys below a subdirectory of
// `prefix` (a range also sees the prefix's own files that sort between its
// subdirectories, such as "d0-file" between "d0" and "d0/": counted once, by
// the first level's listing).
Status ListFlat(s3::ObjectClient& client, const std::string& bucket, const std::string& prefix,
                const std::string& start_after, const std::string& end, bool nested_only,
                Counts& counts) {
  s3::ListObjectsV2Params p;
  p.bucket = bucket;
  p.prefix = prefix;
  p.start_after = start_after;
  p.max_keys = 1000;
  for (;;) {
    auto page = client.ListObjectsV2(p);
    counts.requests.fetch_add(1, std::memory_order_relaxed);
    if (!page.ok()) return page.error();
    uint64_t n = 0;
    bool ended = false;
    for (const auto& o : page->objects) {
      if (!end.empty() && o.key >= end) {
        ended = true;
        break;
      }
      if (!nested_only || o.key.find('/', prefix.size()) != std::string::npos) ++n;
    }
    counts.keys.fetch_add(n, std::memory_order_relaxed);
    if (ended || !page->is_truncated) return Status::Ok();
    if (page->next_continuation_token.empty()) {
      return MakeError(EIO, "InvalidResponse", "truncated listing without a continuation token");
    }
    p.continuation_token = page->next_continuation_token;
  }
}

Status ListParallel(s3::ObjectClient& client, const S3Url& url, int parallel, Counts& counts) {
  // The first level: files counted, subdirectories kept (sorted by S3).
  std::vector<std::string> dirs;
  s3::ListObjectsV2Params p;
  p.bucket = url.bucket;
  p.prefix = url.key;
  p.delimiter = "/";
  p.max_keys = 1000;
  for (;;) {
    auto page = client.ListObjectsV2(p);
    counts.requests.fetch_add(1, std::memory_order_relaxed);
    if (!page.ok()) return page.error();
    counts.keys.fetch_add(page->objects.size(), std::memory_order_relaxed);
    for (auto& d : page->common_prefixes) dirs.push_back(std::move(d));
    if (!page->is_truncated) break;
    if (page->next_continuation_token.empty()) {
      return MakeError(EIO, "InvalidResponse", "truncated listing without a continuation token");
    }
    p.continuation_token = page->next_continuation_token;
  }
  if (dirs.empty()) return Status::Ok();
  std::sort(dirs.begin(), dirs.end());
  const size_t ranges = std::clamp<size_t>(dirs.size() / 4, 1, 4 * static_cast<size_t>(parallel));
  std::atomic<size_t> next{0};
  Mutex mu;
  Status first_error = Status::Ok();
  auto worker = [&] {
    for (size_t r; (r = next.fetch_add(1)) < ranges;) {
      const size_t from = dirs.size() * r / ranges, to = dirs.size() * (r + 1) / ranges;
      const std::string& first = dirs[from];
      Status s = ListFlat(client, url.bucket, url.key, first.substr(0, first.size() - 1),
                          to < dirs.size() ? dirs[to] : std::string(), true, counts);
      if (!s.ok()) {
        MutexLock lock(mu);
        if (first_error.ok()) first_error = s;
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(parallel));
  for (int i = 0; i < parallel; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return first_error;
}

int RunBenchList(const ListBenchOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("bench list", "", url.error());
  const int connections = std::max(1, ctx.options().connections);
  auto client = ctx.Client((o.parallel + connections - 1) / connections);  // a connection each
  if (!client.ok()) return ReportError("bench list", o.url, client.error());
  Counts counts;
  RunMeter meter;
  Status s = o.parallel <= 1 ? ListFlat(**client, url->bucket, url->key, "", "", false, counts)
                             : ListParallel(**client, *url, o.parallel, counts);
  const double wall = meter.WallSeconds(), cpu = meter.CpuSeconds();
  if (!s.ok()) return ReportError("bench list", url->ToString(), s.error());
  const uint64_t keys = counts.keys.load(), requests = counts.requests.load();
  const double rate = wall > 0 ? static_cast<double>(keys) / wall : 0;
  if (o.json) {
    std::printf(
        "{\"op\":\"list\",\"url\":\"%s\",\"parallel\":%d,\"keys\":%llu,\"seconds\":%.6f,"
        "\"keys_per_second\":%.0f,\"requests\":%llu,\"cpu_seconds\":%.3f}\n",
        url->ToString().c_str(), o.parallel, static_cast<unsigned long long>(keys), wall, rate,
        static_cast<unsigned long long>(requests), cpu);
  } else {
    std::printf(
        "list %s parallel %d: %llu keys in %.3f s, %.0f keys/s, %llu requests, CPU %.3f s\n",
        url->ToString().c_str(), o.parallel, static_cast<unsigned long long>(keys), wall, rate,
        static_cast<unsigned long long>(requests), cpu);
  }
  return 0;
}

}  // namespace

S3Subcommand AddBenchListCommand(CLI::App& bench) {
  auto o = std::make_shared<ListBenchOptions>();
  CLI::App* list = bench.add_subcommand("list", "enumerate every key under a prefix (keys/s)");
  list->add_option("url", o->url, "s3://BUCKET[/PREFIX]")->required();
  list->add_option("--parallel", o->parallel,
                   "listings in flight: 1 is one flat listing; N lists 4N key ranges of the "
                   "first level's subdirectories on N threads, as the mount's prefetcher does")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  list->add_flag("--json", o->json, "print one JSON line");
  return {list, [o](S3Context& ctx) { return RunBenchList(*o, ctx); }};
}

}  // namespace bucketfs::tools
