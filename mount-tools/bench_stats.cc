#include "mount-tools/bench_stats.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bucketfs::tools {

double ProcessCpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

uint64_t PeakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

RunMeter::RunMeter()
    : wall_start_(std::chrono::steady_clock::now()), cpu_start_(ProcessCpuSeconds()) {}

double RunMeter::WallSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
}

double RunMeter::CpuSeconds() const { return ProcessCpuSeconds() - cpu_start_; }

double BenchReport::TotalSeconds() const {
  double t = 0;
  for (double s : run_seconds) t += s;
  return t;
}

uint64_t BenchReport::TotalBytes() const {
  uint64_t b = 0;
  for (uint64_t x : run_bytes) b += x;
  return b;
}

double BenchReport::MegabytesPerSecond() const {
  double t = TotalSeconds();
  return t > 0 ? static_cast<double>(TotalBytes()) / t / 1e6 : 0;
}

double BenchReport::BestMegabytesPerSecond() const {
  double best = 0;
  for (size_t i = 0; i < run_seconds.size() && i < run_bytes.size(); ++i) {
    if (run_seconds[i] > 0) {
      best = std::max(best, static_cast<double>(run_bytes[i]) / run_seconds[i] / 1e6);
    }
  }
  return best;
}

double BenchReport::CpuSecondsPerGiB() const {
  uint64_t b = TotalBytes();
  return b > 0 ? cpu_seconds / (static_cast<double>(b) / (1ull << 30)) : 0;
}

double Percentile(std::vector<double> values, double pct) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<size_t>(std::ceil(pct / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

std::string BenchReport::HumanLine() const {
  char buf[512];
  int n = std::snprintf(
      buf, sizeof buf,
      "bench %s %s: %.1f MB/s (best %.1f) over %zu run(s), %.3f GiB in %.2f s, "
      "CPU %.3f s/GiB, %llu requests, peak RSS %.1f MiB",
      op.c_str(), url.c_str(), MegabytesPerSecond(), BestMegabytesPerSecond(), run_seconds.size(),
      static_cast<double>(TotalBytes()) / (1ull << 30), TotalSeconds(), CpuSecondsPerGiB(),
      static_cast<unsigned long long>(requests), static_cast<double>(PeakRssBytes()) / (1 << 20));
  std::string line(buf, n > 0 ? static_cast<size_t>(std::min<int>(n, sizeof buf - 1)) : 0);
  if (!latencies_ms.empty()) {
    double t = TotalSeconds();
    std::snprintf(buf, sizeof buf, ", %.0f IOPS, latency p50 %.2f ms p99 %.2f ms",
                  t > 0 ? static_cast<double>(latencies_ms.size()) / t : 0,
                  Percentile(latencies_ms, 50), Percentile(latencies_ms, 99));
    line += buf;
  }
  return line;
}

std::string BenchReport::JsonLine() const {
  // The URL is the only free text; escape what JSON requires.
  std::string u;
  for (char c : url) {
    if (c == '"' || c == '\\') {
      u += '\\';
      u += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      u += esc;
    } else {
      u += c;
    }
  }
  std::string runs = "[";
  for (size_t i = 0; i < run_seconds.size(); ++i) {
    char b[64];
    double mbps = run_seconds[i] > 0 && i < run_bytes.size()
                      ? static_cast<double>(run_bytes[i]) / run_seconds[i] / 1e6
                      : 0;
    std::snprintf(b, sizeof b, "%s%.2f", i ? "," : "", mbps);
    runs += b;
  }
  runs += "]";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"tool\":\"bucketfs-s3-bench\",\"op\":\"%s\",\"url\":\"%s\",\"connections\":%d,"
                "\"part_size\":%llu,\"objects\":%d,\"repeat\":%zu,\"bytes\":%llu,"
                "\"seconds\":%.4f,\"mb_per_s\":%.2f,\"best_mb_per_s\":%.2f,\"runs_mb_per_s\":%s,"
                "\"cpu_seconds\":%.4f,\"cpu_s_per_gib\":%.4f,\"requests\":%llu,"
                "\"peak_rss_bytes\":%llu",
                op.c_str(), u.c_str(), connections, static_cast<unsigned long long>(part_size),
                objects, run_seconds.size(), static_cast<unsigned long long>(TotalBytes()),
                TotalSeconds(), MegabytesPerSecond(), BestMegabytesPerSecond(), runs.c_str(),
                cpu_seconds, CpuSecondsPerGiB(), static_cast<unsigned long long>(requests),
                static_cast<unsigned long long>(PeakRssBytes()));
  std::string line = buf;
  if (!latencies_ms.empty()) {
    double t = TotalSeconds();
    std::snprintf(buf, sizeof buf, R"(,"iops":%.1f,"lat_p50_ms":%.3f,"lat_p99_ms":%.3f)",
                  t > 0 ? static_cast<double>(latencies_ms.size()) / t : 0,
                  Percentile(latencies_ms, 50), Percentile(latencies_ms, 99));
    line += buf;
  }
  return line + "}";
}

}  // namespace bucketfs::tools
