// The three metric kinds. Each is a few atomics: updating one is a relaxed
// atomic add with no lock, so hot paths (every FUSE operation, every S3
// request) can count without contending on anything but the cache line.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace bucketfs::metrics {

// Only goes up (restarts at 0 with the process).
class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Goes up and down (bytes in use, requests in flight).
class Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Observations counted into fixed buckets (upper bounds, ascending; +Inf is
// implicit), plus their sum. Rendered cumulatively as Prometheus expects.
class Histogram {
 public:
  // REQUIRES: bounds ascending, finite.
  explicit Histogram(std::span<const double> bounds);

  void Observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
    uint64_t count() const { return cumulative.empty() ? 0 : cumulative.back(); }
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> counts_;  // per bucket, bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// Bucket bounds of request and operation latencies, in seconds: 50 µs
// (a FUSE operation answered from memory) to 60 s (a multipart complete).
std::span<const double> LatencyBuckets();

}  // namespace bucketfs::metrics
