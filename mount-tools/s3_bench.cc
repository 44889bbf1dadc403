// `bucketfs s3 bench get|put|get-random`: the yardstick every mount benchmark
// is compared with ("the direct client on the same server").
//
// get: each object is read with --connections ranged GETs of --part-size in
//   flight into reused memory buffers (no disk), --repeat times.
// put: --size bytes per object from one buffer of random bytes, as a
//   parallel multipart upload (PutObject below --part-size).
// get-random: --count random block-aligned GETs of --block bytes with
//   --iodepth in flight (IOPS, latency percentiles); with --runtime S, GETs
//   keep starting for S seconds (and at least --count of them), so the run
//   lasts as long as the fio job it is compared with.
// --objects K runs K objects at once, one stream (thread) each with its own
// --connections window; the keys are KEY-0 .. KEY-(K-1) when K > 1 (the
// harness layout seq/file-0 .. seq/file-7 is `s3://b/seq/file --objects 8`).
// Reported: MB/s (1e6 bytes), CPU seconds per GiB (getrusage of the whole
// process), peak RSS, requests; --json prints one JSON line instead.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "mount-tools/bench_stats.h"
#include "mount-tools/byte_size.h"
#include "mount-tools/s3_cli.h"
#include "mount-tools/s3_url.h"
#include "mount-tools/transfer_plan.h"
#include "mount-tools/windowed_runner.h"

namespace bucketfs::tools {
namespace {

struct BenchOptions {
  std::string url;
  std::string part_size;
  int repeat = 1;
  int objects = 1;
  bool json = false;
  // put
  std::string size = "1G";
  bool no_md5 = false;
  std::string checksum = "md5";  // md5 | crc32c | none (what each part carries)
  // get-random
  std::string block = "4K";
  int iodepth = 32;
  uint64_t count = 10000;
  double runtime = 0;  // seconds; 0: exactly `count` GETs
  uint64_t seed = 1;
};

std::vector<S3Url> ObjectUrls(const S3Url& base, int objects) {
  if (objects <= 1) return {base};
  std::vector<S3Url> urls;
  urls.reserve(static_cast<size_t>(objects));
  for (int i = 0; i < objects; ++i)
    urls.push_back({base.bucket, base.key + "-" + std::to_string(i)});
  return urls;
}

// Runs fn(i) for i in [0, n) on n threads (inline when n == 1); first error wins.
Status ParallelStreams(size_t n, const std::function<Status(size_t)>& fn) {
  if (n == 1) return fn(0);
  std::vector<Status> results(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&, i] { results[i] = fn(i); });
  for (auto& t : threads) t.join();
  for (auto& s : results) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// A pool of `count` reusable buffers, pre-faulted so page faults are not
// measured; used from one RunWindowed caller thread only.
class BufferPool {
 public:
  BufferPool(size_t count, size_t size) : storage_(count * size), size_(size) {
    std::memset(storage_.data(), 0, storage_.size());
    for (size_t i = 0; i < count; ++i) free_.push_back(i);
  }
  bool empty() const { return free_.empty(); }
  size_t Take() {
    size_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void Give(size_t slot) { free_.push_back(slot); }
  std::span<std::byte> Slot(size_t slot, size_t len) {
    return {storage_.data() + slot * size_, len};
  }

 private:
  std::vector<std::byte> storage_;
  size_t size_;
  std::vector<size_t> free_;
};

struct ObjectTarget {
  S3Url url;
  uint64_t size = 0;
};

Result<std::vector<ObjectTarget>> HeadAll(s3::ObjectClient& client,
                                          const std::vector<S3Url>& urls) {
  std::vector<ObjectTarget> targets;
  for (const auto& u : urls) {
    auto head = client.HeadObject({u.bucket, u.key, "", ""});
    if (!head.ok()) {
      Error e = head.error();
      e.message = u.ToString() + ": " + e.message;
      return e;
    }
    targets.push_back({u, head->size});
  }
  return targets;
}

// Reads one object once with `window` ranged GETs in flight.
Status ReadObjectOnce(s3::ObjectClient& client, const ObjectTarget& t, uint64_t part_size,
                      int window, BufferPool& pool) {
  std::vector<Part> parts = SplitIntoParts(t.size, part_size);
  std::vector<size_t> slot_of(parts.size());
  WindowedJobs jobs;
  jobs.count = parts.size();
  jobs.window = window;
  jobs.can_start = [&](size_t) { return !pool.empty(); };
  jobs.start = [&](size_t i, Completion done) {
    slot_of[i] = pool.Take();
    s3::GetObjectParams p;
    p.bucket = t.url.bucket;
    p.key = t.url.key;
    p.offset = parts[i].offset;
    p.length = parts[i].length;
    client.GetObjectAsync(
        p, pool.Slot(slot_of[i], parts[i].length),
        [done = std::move(done)](const Result<s3::GetObjectResult>& r) { done(r.status()); });
  };
  jobs.on_complete = [&](size_t i) {
    pool.Give(slot_of[i]);
    return Status::Ok();
  };
  return RunWindowed(jobs);
}

int Finish(const BenchReport& report, bool json) {
  std::printf("%s\n", json ? report.JsonLine().c_str() : report.HumanLine().c_str());
  return 0;
}

int RunBenchGet(const BenchOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("bench get", "", url.error());
  auto part_size = ParseByteSize(o.part_size);
  if (!part_size.ok() || *part_size == 0)
    return ReportError(
        "bench get", "--part-size",
        part_size.ok() ? MakeError(EINVAL, "InvalidArgument", "must be > 0") : part_size.error());
  auto client = ctx.Client(o.objects);
  if (!client.ok()) return ReportError("bench get", o.url, client.error());
  auto targets = HeadAll(**client, ObjectUrls(*url, o.objects));
  if (!targets.ok()) return ReportError("bench get", "", targets.error());
  int window = ctx.options().connections;

  std::vector<std::unique_ptr<BufferPool>> pools;
  for (size_t i = 0; i < targets->size(); ++i) {
    pools.push_back(std::make_unique<BufferPool>(static_cast<size_t>(window), *part_size));
  }
  BenchReport report{"get", url->ToString(), window, *part_size, o.objects};
  report.requests = targets->size();  // the HEADs
  RunMeter total;
  for (int r = 0; r < o.repeat; ++r) {
    RunMeter run;
    Status s = ParallelStreams(targets->size(), [&](size_t i) {
      return ReadObjectOnce(**client, (*targets)[i], *part_size, window, *pools[i]);
    });
    if (!s.ok()) return ReportError("bench get", url->ToString(), s.error());
    report.run_seconds.push_back(run.WallSeconds());
    uint64_t bytes = 0;
    for (const auto& t : *targets) {
      bytes += t.size;
      report.requests += (t.size + *part_size - 1) / *part_size;
    }
    report.run_bytes.push_back(bytes);
  }
  report.cpu_seconds = total.CpuSeconds();
  return Finish(report, o.json);
}

int RunBenchPut(const BenchOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("bench put", "", url.error());
  auto part_size = ParseByteSize(o.part_size);
  auto size = ParseByteSize(o.size);
  if (!part_size.ok() || *part_size == 0)
    return ReportError(
        "bench put", "--part-size",
        part_size.ok() ? MakeError(EINVAL, "InvalidArgument", "must be > 0") : part_size.error());
  if (!size.ok()) return ReportError("bench put", "--size", size.error());
  auto client = ctx.Client(o.objects);
  if (!client.ok()) return ReportError("bench put", o.url, client.error());
  std::vector<S3Url> urls = ObjectUrls(*url, o.objects);

  // One buffer of random bytes, as large as one part (or the whole object
  // when that is smaller); every part is a read-only view of it.
  uint64_t part = FitPartSize(std::max<uint64_t>(*size, 1), *part_size);
  std::vector<std::byte> random(std::min(*size, part));
  std::mt19937_64 rng(o.seed);
  for (size_t i = 0; i + 8 <= random.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(random.data() + i, &v, 8);
  }
  auto part_bytes = [&](const Part& p) {
    return std::span<const std::byte>(random.data(), p.length);
  };

  s3::BodyChecksum checksum = s3::BodyChecksum::kMd5;
  if (o.no_md5 || o.checksum == "none") {
    checksum = s3::BodyChecksum::kNone;
  } else if (o.checksum == "crc32c") {
    checksum = s3::BodyChecksum::kCrc32c;
  }
  BenchReport report{"put", url->ToString(), ctx.options().connections, part, o.objects};
  RunMeter total;
  Mutex mu;
  for (int r = 0; r < o.repeat; ++r) {
    RunMeter run;
    Status s = ParallelStreams(urls.size(), [&](size_t i) {
      UploadSpec spec;
      spec.bucket = urls[i].bucket;
      spec.key = urls[i].key;
      spec.part_size = *part_size;
      spec.window = ctx.options().connections;
      spec.checksum = checksum;
      uint64_t requests = 0;
      Status st = UploadBuffer(**client, spec, part_bytes, *size, nullptr, &requests);
      MutexLock lock(mu);
      report.requests += requests;
      return st;
    });
    if (!s.ok()) return ReportError("bench put", url->ToString(), s.error());
    report.run_seconds.push_back(run.WallSeconds());
    report.run_bytes.push_back(*size * urls.size());
  }
  report.cpu_seconds = total.CpuSeconds();
  return Finish(report, o.json);
}

// Random block-aligned reads with `iodepth` in flight: `count` of them, or
// with runtime > 0 as many as start in `runtime` seconds (at least `count`).
// Latencies in ms, one per read done.
Status RandomReads(s3::ObjectClient& client, const ObjectTarget& t, uint64_t block, int iodepth,
                   uint64_t count, double runtime, uint64_t seed, std::vector<double>& latencies) {
  uint64_t blocks = t.size / block;
  if (blocks == 0) return MakeError(EINVAL, "InvalidArgument", "object smaller than --block");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> pick(0, blocks - 1);
  BufferPool pool(static_cast<size_t>(iodepth), block);
  using Clock = std::chrono::steady_clock;
  struct InFlight {
    size_t slot = 0;
    Clock::time_point started;
  };
  std::unordered_map<size_t, InFlight> in_flight;  // by job index
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(runtime, 0.0)));
  WindowedJobs jobs;
  jobs.count = runtime > 0 ? std::numeric_limits<size_t>::max() : count;
  jobs.window = iodepth;
  if (runtime > 0) {
    jobs.stop_starting = [&] {
      return latencies.size() + in_flight.size() >= count && Clock::now() >= deadline;
    };
  }
  jobs.can_start = [&](size_t) { return !pool.empty(); };
  jobs.start = [&](size_t i, Completion done) {
    InFlight& f = in_flight[i];
    f.slot = pool.Take();
    f.started = Clock::now();
    s3::GetObjectParams p;
    p.bucket = t.url.bucket;
    p.key = t.url.key;
    p.offset = pick(rng) * block;
    p.length = block;
    client.GetObjectAsync(
        p, pool.Slot(f.slot, block),
        [done = std::move(done)](const Result<s3::GetObjectResult>& r) { done(r.status()); });
  };
  jobs.on_complete = [&](size_t i) {
    auto it = in_flight.find(i);
    // Measured when the caller learns of it: what an application would see.
    latencies.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - it->second.started).count());
    pool.Give(it->second.slot);
    in_flight.erase(it);
    return Status::Ok();
  };
  return RunWindowed(jobs);
}

int RunBenchGetRandom(const BenchOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("bench get-random", "", url.error());
  auto block = ParseByteSize(o.block);
  if (!block.ok() || *block == 0)
    return ReportError(
        "bench get-random", "--block",
        block.ok() ? MakeError(EINVAL, "InvalidArgument", "must be > 0") : block.error());
  auto client =
      ctx.Client(o.objects * std::max(1, o.iodepth) / std::max(1, ctx.options().connections) + 1);
  if (!client.ok()) return ReportError("bench get-random", o.url, client.error());
  auto targets = HeadAll(**client, ObjectUrls(*url, o.objects));
  if (!targets.ok()) return ReportError("bench get-random", "", targets.error());

  BenchReport report{"get-random", url->ToString(), o.iodepth, *block, o.objects};
  report.requests = targets->size();
  RunMeter total;
  Mutex mu;
  for (int r = 0; r < o.repeat; ++r) {
    RunMeter run;
    uint64_t reads = 0;  // guarded by mu
    Status s = ParallelStreams(targets->size(), [&](size_t i) {
      std::vector<double> lat;
      Status st = RandomReads(**client, (*targets)[i], *block, o.iodepth, o.count, o.runtime,
                              o.seed + i + static_cast<uint64_t>(r) * 1000, lat);
      MutexLock lock(mu);
      report.latencies_ms.insert(report.latencies_ms.end(), lat.begin(), lat.end());
      reads += lat.size();
      return st;
    });
    if (!s.ok()) return ReportError("bench get-random", url->ToString(), s.error());
    report.run_seconds.push_back(run.WallSeconds());
    report.run_bytes.push_back(*block * reads);
    report.requests += reads;
  }
  report.cpu_seconds = total.CpuSeconds();
  return Finish(report, o.json);
}

void AddShared(CLI::App* app, BenchOptions& o, const char* default_part) {
  o.part_size = default_part;
  app->add_option("url", o.url, "s3://BUCKET/KEY (KEY-0 .. KEY-(K-1) with --objects K)")
      ->required();
  app->add_option("--repeat", o.repeat, "runs")->check(CLI::Range(1, 1000))->capture_default_str();
  app->add_option("--objects", o.objects, "objects at once, one stream each")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app->add_flag("--json", o.json, "print one JSON line");
}

}  // namespace

std::vector<S3Subcommand> AddBenchCommands(CLI::App& s3) {
  CLI::App* bench = s3.add_subcommand("bench", "measure throughput, CPU and IOPS of the client");
  bench->require_subcommand(1);

  auto get_o = std::make_shared<BenchOptions>();
  CLI::App* get = bench->add_subcommand("get", "parallel ranged GETs of whole objects into memory");
  AddShared(get, *get_o, "8M");
  get->add_option("--part-size", get_o->part_size, "bytes per ranged GET")->capture_default_str();

  auto put_o = std::make_shared<BenchOptions>();
  CLI::App* put = bench->add_subcommand("put", "parallel multipart PUT of random bytes");
  AddShared(put, *put_o, "16M");
  put->add_option("--part-size", put_o->part_size, "multipart part size")->capture_default_str();
  put->add_option("--size", put_o->size, "bytes per object (1G, 256M, ...)")->capture_default_str();
  put->add_option("--checksum", put_o->checksum,
                  "what each part carries for the server to verify: md5 (Content-MD5), crc32c "
                  "(x-amz-checksum-crc32c, as a bucketfs mount sends) or none")
      ->check(CLI::IsMember({"md5", "crc32c", "none"}))
      ->capture_default_str();
  put->add_flag("--no-md5", put_o->no_md5, "same as --checksum none");

  auto rnd_o = std::make_shared<BenchOptions>();
  CLI::App* rnd = bench->add_subcommand("get-random", "random ranged GETs (IOPS)");
  AddShared(rnd, *rnd_o, "8M");
  rnd->add_option("--block", rnd_o->block, "bytes per GET")->capture_default_str();
  rnd->add_option("--iodepth", rnd_o->iodepth, "GETs in flight per object")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  rnd->add_option("--count", rnd_o->count, "GETs per object per run (at least, with --runtime)")
      ->capture_default_str();
  rnd->add_option("--runtime", rnd_o->runtime,
                  "seconds during which GETs keep starting (0: exactly --count)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  rnd->add_option("--seed", rnd_o->seed, "random offsets seed")->capture_default_str();

  return {{get, [get_o](S3Context& ctx) { return RunBenchGet(*get_o, ctx); }},
          {put, [put_o](S3Context& ctx) { return RunBenchPut(*put_o, ctx); }},
          {rnd, [rnd_o](S3Context& ctx) { return RunBenchGetRandom(*rnd_o, ctx); }},
          AddBenchListCommand(*bench)};
}

}  // namespace bucketfs::tools
