// IoCounters: bytes read and written through the mount and the operations
// that failed, counted where the filesystem core answers them. Lock-free
// and cheap enough for every READ; the service status line (systemd's
// STATUS=) samples them, and a metrics registry can export the same fields.
#pragma once

#include <atomic>
#include <cstdint>

namespace bucketfs::fs {

struct IoCountersSnapshot {
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t errors = 0;  // failed reads, writes, closes and fsyncs
};

class IoCounters {
 public:
  void AddRead(uint64_t bytes) { bytes_read_.fetch_add(bytes, std::memory_order_relaxed); }
  void AddWritten(uint64_t bytes) { bytes_written_.fetch_add(bytes, std::memory_order_relaxed); }
  void AddError() { errors_.fetch_add(1, std::memory_order_relaxed); }
  IoCountersSnapshot Snapshot() const {
    return {bytes_read_.load(std::memory_order_relaxed),
            bytes_written_.load(std::memory_order_relaxed),
            errors_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> errors_{0};
};

}  // namespace bucketfs::fs
