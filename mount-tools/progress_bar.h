// ProgressBar: one self-redrawing line on stderr for long transfers.
//
// Enabled only when asked and stderr is a terminal; nothing is drawn during
// the first half second, so short transfers print nothing. Add() is called
// from transport threads (an atomic counter); a private thread redraws five
// times a second; Finish() stops it and clears the line. Disabled bars cost
// one atomic add per call.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "base/mutex.h"

namespace bucketfs::tools {

// What the counter counts: bytes (MB/s) or entries (a walk: entries/s).
enum class ProgressUnit { kBytes, kEntries };

class ProgressBar {
 public:
  // `label` e.g. "get s3://b/k"; `total` bytes (0 = unknown).
  ProgressBar(std::string label, uint64_t total, bool enabled,
              ProgressUnit unit = ProgressUnit::kBytes);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Add(uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }
  uint64_t done() const { return done_.load(std::memory_order_relaxed); }
  void Finish();

  // True when stderr is a terminal and the user did not say --no-progress.
  static bool ShouldShow(bool no_progress_flag);

  // The line drawn for a state (tests check it).
  static std::string Render(const std::string& label, uint64_t done, uint64_t total, double seconds,
                            int width, ProgressUnit unit = ProgressUnit::kBytes);

 private:
  void Loop() EXCLUDES(mu_);
  // Waits up to `limit` for Finish; true once it was called.
  bool StoppedWithin(std::chrono::milliseconds limit) REQUIRES(mu_);

  const std::string label_;
  const uint64_t total_;
  const ProgressUnit unit_;
  std::atomic<uint64_t> done_{0};
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool drawn_ = false;  // only the drawing thread touches it until joined
  std::thread thread_;
};

}  // namespace bucketfs::tools
