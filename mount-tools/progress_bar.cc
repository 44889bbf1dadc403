#include "mount-tools/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "mount-tools/s3_url.h"

namespace bucketfs::tools {

ProgressBar::ProgressBar(std::string label, uint64_t total, bool enabled, ProgressUnit unit)
    : label_(std::move(label)), total_(total), unit_(unit) {
  if (enabled) thread_ = std::thread([this] { Loop(); });
}

ProgressBar::~ProgressBar() { Finish(); }

bool ProgressBar::ShouldShow(bool no_progress_flag) {
  return !no_progress_flag && isatty(STDERR_FILENO) == 1;
}

std::string ProgressBar::Render(const std::string& label, uint64_t done, uint64_t total,
                                double seconds, int width, ProgressUnit unit) {
  double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const bool bytes = unit == ProgressUnit::kBytes;
  auto amount = [bytes](uint64_t n) {
    return bytes ? FormatBytes(n) : std::to_string(n) + " entries";
  };
  std::string tail = amount(done);
  if (total > 0) tail += " / " + amount(total);
  char buf[96];
  if (bytes) {
    std::snprintf(buf, sizeof buf, "  %.1f MB/s", rate / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "  %.0f/s", rate);
  }
  tail += buf;
  if (total > 0 && rate > 0 && done < total) {
    std::snprintf(buf, sizeof buf, "  ETA %.0fs", static_cast<double>(total - done) / rate);
    tail += buf;
  }
  std::string line = label;
  if (total > 0) {
    int bar = width - static_cast<int>(label.size() + tail.size()) - 10;
    if (bar > 50) bar = 50;
    if (bar >= 10) {
      int filled = static_cast<int>(static_cast<double>(bar) * static_cast<double>(done) /
                                    static_cast<double>(total));
      if (filled > bar) filled = bar;
      std::snprintf(
          buf, sizeof buf, " %3d%% [",
          static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)));
      line += buf;
      line += std::string(filled, '=') + std::string(bar - filled, ' ') + "]";
    }
  }
  line += " " + tail;
  if (width > 1 && line.size() >= static_cast<size_t>(width)) line.resize(width - 1);
  return line;
}

void ProgressBar::Loop() {
  auto start = std::chrono::steady_clock::now();
  MutexLock lock(mu_);
  // Short transfers finish before the first draw and print nothing.
  if (StoppedWithin(std::chrono::milliseconds(500))) return;
  while (true) {
    struct winsize ws {};
    int width = (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) ? ws.ws_col : 80;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string line = Render(label_, done(), total_, secs, width, unit_);
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
    if (StoppedWithin(std::chrono::milliseconds(200))) break;
  }
}

bool ProgressBar::StoppedWithin(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!stop_ && cv_.WaitUntil(mu_, deadline)) {
  }
  return stop_;
}

void ProgressBar::Finish() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) {
    thread_.join();
    if (drawn_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
    }
  }
}

}  // namespace bucketfs::tools
