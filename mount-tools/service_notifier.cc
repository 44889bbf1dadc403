#include "mount-tools/service_notifier.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace bucketfs::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

ServiceNotifier::ServiceNotifier(const SystemdNotifier& systemd, Options options,
                                 CounterSource counters)
    : systemd_(systemd), options_(std::move(options)), counters_(std::move(counters)) {}

ServiceNotifier::~ServiceNotifier() { Stop(); }

void ServiceNotifier::MountReported() {
  if (!systemd_.enabled() || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void ServiceNotifier::Stopping(int signal) {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    stop_signal_ = signal;
    cv_.NotifyAll();
  }
  if (!systemd_.enabled()) return;
  const std::string why = signal > 0 ? std::string("signal ") + strsignal(signal) : "unmounted";
  systemd_.Notify("STOPPING=1\nSTATUS=stopping (" + why + "): finishing uploads, then unmounting");
}

void ServiceNotifier::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
}

std::string ServiceNotifier::ShowRate(double bytes_per_second) {
  static constexpr const char* kUnits[] = {"B/s", "kB/s", "MB/s", "GB/s"};
  size_t unit = 0;
  double v = std::max(0.0, bytes_per_second);
  while (v >= 1000 && unit + 1 < std::size(kUnits)) {
    v /= 1000;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), v < 10 && unit > 0 ? "%.1f %s" : "%.0f %s", v, kUnits[unit]);
  return buf;
}

std::string ServiceNotifier::StatusLine(const fs::IoCountersSnapshot& now,
                                        const fs::IoCountersSnapshot& before, double seconds,
                                        bool stopping) const {
  const double s = std::max(seconds, 1e-3);
  const auto rate = [&](uint64_t a, uint64_t b) {
    return ShowRate(static_cast<double>(a - b) / s);
  };
  std::string line = stopping ? "stopping: finishing uploads of " : "serving ";
  line += options_.source + " at " + options_.mountpoint + ": read " +
          rate(now.bytes_read, before.bytes_read) + ", wrote " +
          rate(now.bytes_written, before.bytes_written) + ", " + std::to_string(now.errors) +
          (now.errors == 1 ? " error" : " errors");
  return line;
}

bool ServiceNotifier::WaitUntilMountAnswers() {
  for (;;) {
    struct stat st {};
    if (::stat(options_.mountpoint.c_str(), &st) == 0) return true;
    const int err = errno;
    MutexLock lock(mu_);
    if (stop_ || stopping_) return false;
    spdlog::debug("mountpoint {} does not answer yet: {}", options_.mountpoint, strerror(err));
    cv_.WaitUntil(mu_, Clock::now() + std::chrono::milliseconds(100));
  }
}

void ServiceNotifier::Run() {
  if (!WaitUntilMountAnswers()) return;
  fs::IoCountersSnapshot before = counters_();
  Clock::time_point sampled = Clock::now();
  systemd_.Notify("READY=1\nSTATUS=" + StatusLine(before, before, 1, false));
  spdlog::info("told systemd the mount is ready");

  const auto watchdog = systemd_.watchdog_period();
  const Clock::duration status_period = options_.status_period;
  const Clock::duration tick =
      watchdog ? std::min<Clock::duration>(status_period, *watchdog) : status_period;
  Clock::time_point next_status = sampled + status_period;
  for (;;) {
    bool stopping = false;
    {
      MutexLock lock(mu_);
      const Clock::time_point wake = Clock::now() + tick;
      while (!stop_ && Clock::now() < wake) cv_.WaitUntil(mu_, wake);
      if (stop_) return;
      stopping = stopping_;
    }
    // A serving mount proves it still answers before the watchdog is fed;
    // once stopping, the loop no longer answers and the ping says only
    // that the shutdown is alive.
    if (watchdog) {
      struct stat st {};
      if (stopping || ::stat(options_.mountpoint.c_str(), &st) == 0) {
        systemd_.Notify("WATCHDOG=1");
      }
    }
    const Clock::time_point now_time = Clock::now();
    if (now_time >= next_status) {
      const fs::IoCountersSnapshot now = counters_();
      systemd_.Notify("STATUS=" + StatusLine(now, before, Seconds(now_time - sampled), stopping));
      before = now;
      sampled = now_time;
      next_status = now_time + status_period;
    }
  }
}

}  // namespace bucketfs::tools
