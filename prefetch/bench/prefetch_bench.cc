// prefetch_bench: the read path against a real S3 endpoint (s3sim, s3rver,
// AWS), without FUSE. Puts one object, then reads it back (1) directly with
// parallel ranged GETs (the baseline), (2) sequentially through the
// Prefetcher, checking every byte, (3) at random in 4 KiB reads from several
// threads; prints MB/s, CPU-seconds per GiB and IOPS.
//
//   AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
//     prefetch_bench http://127.0.0.1:4568 bench-bucket 256 [read_kib] [threads]
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "prefetch/object_client_range_source.h"
#include "prefetch/prefetcher.h"
#include "s3/client_config.h"
#include "s3/object_client.h"

namespace {

using namespace bucketfs;  // NOLINT: a small tool
using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double Seconds(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

std::vector<std::byte> Pattern(uint64_t size) {
  std::vector<std::byte> v(size);
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i < size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(v.data() + i, &x, std::min<uint64_t>(8, size - i));
  }
  return v;
}

int Fail(const char* what, const Error& e) {
  std::fprintf(stderr, "%s: %s\n", what, e.ToString().c_str());
  return 1;
}

int Run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s ENDPOINT BUCKET SIZE_MIB [READ_KIB] [THREADS]\n", argv[0]);
    return 2;
  }
  const std::string endpoint = argv[1], bucket = argv[2];
  const uint64_t size = std::strtoull(argv[3], nullptr, 10) << 20;
  const uint64_t read_size = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1024) << 10;
  const int threads = argc > 5 ? std::atoi(argv[5]) : 8;
  const std::string key = "prefetch-bench/object.bin";

  s3::ClientConfig cfg;
  cfg.endpoint_url = endpoint;
  cfg.force_path_style = true;
  auto client_or = s3::MakeS3Client(cfg, s3::CurrentEnvironment());
  if (!client_or.ok()) return Fail("client", client_or.error());
  std::shared_ptr<s3::ObjectClient> client = std::move(client_or.value());

  (void)client->CreateBucket({bucket});
  const std::vector<std::byte> data = Pattern(size);
  {
    s3::PutObjectParams p;
    p.bucket = bucket;
    p.key = key;
    auto put = client->PutObject(p, data);
    if (!put.ok()) return Fail("put", put.error());
  }
  auto head = client->HeadObject({bucket, key});
  if (!head.ok()) return Fail("head", head.error());
  const prefetch::ObjectVersion version{bucket, key, head->etag, head->size};
  const double mib = static_cast<double>(size) / (1 << 20);

  // (1) Direct: 8 MiB ranged GETs, 16 in flight, into one buffer.
  {
    Mutex mu;
    CondVar cv;
    int in_flight = 0;
    bool ok = true;
    const uint64_t part = 8 << 20;
    const double cpu0 = CpuSeconds();
    const auto t0 = Clock::now();
    // Allocated (not touched) inside the measurement, like the prefetcher's parts.
    auto storage = std::make_unique_for_overwrite<std::byte[]>(size);
    const std::span<std::byte> buf(storage.get(), size);
    for (uint64_t off = 0; off < size; off += part) {
      const uint64_t len = std::min(part, size - off);
      {
        MutexLock lock(mu);
        while (!(in_flight < 16)) cv.Wait(mu);
        ++in_flight;
      }
      s3::GetObjectParams p;
      p.bucket = bucket;
      p.key = key;
      p.offset = off;
      p.length = len;
      client->GetObjectAsync(p, buf.subspan(off, len), [&](const Result<s3::GetObjectResult>& r) {
        MutexLock lock(mu);
        ok = ok && r.ok();
        --in_flight;
        cv.NotifyAll();
      });
    }
    MutexLock lock(mu);
    while (!(in_flight == 0)) cv.Wait(mu);
    const double s = Seconds(t0);
    std::printf("direct    : %8.1f MB/s  %.2f CPU-s/GiB  %s\n", mib / s,
                (CpuSeconds() - cpu0) / (mib / 1024),
                ok && std::memcmp(buf.data(), data.data(), size) == 0 ? "bytes ok" : "MISMATCH");
  }

  prefetch::PrefetchConfig pcfg;
  auto source = std::make_shared<prefetch::ObjectClientRangeSource>(client);
  prefetch::Prefetcher prefetcher(pcfg, source);

  // (2) Sequential through the prefetcher.
  {
    auto reader = prefetcher.Open(version);
    std::vector<std::byte> buf(read_size);
    bool ok = true;
    const double cpu0 = CpuSeconds();
    const auto t0 = Clock::now();
    for (uint64_t off = 0; off < size; off += read_size) {
      auto n = reader->Read(off, buf);
      if (!n.ok()) return Fail("read", n.error());
      ok = ok && std::memcmp(buf.data(), data.data() + off, *n) == 0;
    }
    const double s = Seconds(t0);
    const auto st = reader->stats();
    std::printf(
        "prefetch  : %8.1f MB/s  %.2f CPU-s/GiB  %s  (%llu fetches, %llu/%llu reads waited, "
        "peak %llu MiB)\n",
        mib / s, (CpuSeconds() - cpu0) / (mib / 1024), ok ? "bytes ok" : "MISMATCH",
        static_cast<unsigned long long>(st.fetches),
        static_cast<unsigned long long>(st.waited_reads), static_cast<unsigned long long>(st.reads),
        static_cast<unsigned long long>(prefetcher.budget().peak() >> 20));
  }

  // (3) Random 4 KiB reads from several threads.
  {
    auto reader = prefetcher.Open(version);
    std::atomic<int> bad{0};
    const int per_thread = 500;
    const auto t0 = Clock::now();
    std::vector<std::thread> ts;
    ts.reserve(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        std::mt19937_64 rng(t + 1);
        std::vector<std::byte> buf(4096);
        for (int i = 0; i < per_thread; ++i) {
          const uint64_t off = (rng() % (size / 4096)) * 4096;
          auto n = reader->Read(off, buf);
          if (!n.ok() || std::memcmp(buf.data(), data.data() + off, *n) != 0) bad++;
        }
      });
    }
    for (auto& th : ts) th.join();
    const double s = Seconds(t0);
    std::printf("random 4K : %8.0f IOPS with %d threads, %s, %llu bytes fetched for %llu read\n",
                threads * per_thread / s, threads, bad == 0 ? "bytes ok" : "MISMATCH",
                static_cast<unsigned long long>(reader->stats().bytes_fetched),
                4096ull * static_cast<unsigned long long>(threads) * per_thread);
  }
  return 0;
}

}  // namespace

// Allocation failures and thread errors end the run with a message instead
// of escaping main.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prefetch_bench: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "prefetch_bench: unknown exception\n");
  }
  return 1;
}
