// What `bucketfs s3 bench` measures around one run: wall time, CPU seconds
// of the whole process (getrusage self, user + system: the transport threads
// included), peak RSS; and how it prints them (a human line, one JSON line).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace bucketfs::tools {

class RunMeter {
 public:
  RunMeter();  // starts measuring
  double WallSeconds() const;
  double CpuSeconds() const;  // since construction

 private:
  std::chrono::steady_clock::time_point wall_start_;
  double cpu_start_;
};

double ProcessCpuSeconds();
uint64_t PeakRssBytes();

struct BenchReport {
  std::string op;  // "get", "put", "get-random"
  std::string url;
  int connections = 0;
  uint64_t part_size = 0;  // block size for get-random
  int objects = 1;
  std::vector<double> run_seconds;  // one per repeat
  std::vector<uint64_t> run_bytes;
  double cpu_seconds = 0;            // all runs
  uint64_t requests = 0;             // all runs
  std::vector<double> latencies_ms;  // get-random only

  double TotalSeconds() const;
  uint64_t TotalBytes() const;
  double MegabytesPerSecond() const;  // 1e6 bytes/s over all runs
  double BestMegabytesPerSecond() const;
  double CpuSecondsPerGiB() const;
  std::string HumanLine() const;
  std::string JsonLine() const;
};

// Percentile (0..100) of `values` by nearest rank; 0 when empty.
double Percentile(std::vector<double> values, double pct);

}  // namespace bucketfs::tools
