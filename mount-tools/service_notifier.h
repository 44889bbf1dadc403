// ServiceNotifier: what systemd hears from a mount it supervises
// (Type=notify). READY=1 once the mount answers — RunFuseSession reports
// success just before its loop starts, so a thread stat()s the mountpoint's
// root, which waits for the loop to answer INIT and GETATTR, and only then
// says ready; `systemctl start` returns at that moment. Then every few
// seconds STATUS= with throughput and errors ("serving s3://b/p at /mnt:
// read 120 MB/s, wrote 0 B/s, 0 errors"), WATCHDOG=1 at half of
// WatchdogSec= while a stat of the root still returns, and STOPPING=1 when
// the loop ends (a signal or an unmount), before uploads are finished.
//
// Everything is a no-op when the notifier is disabled (no NOTIFY_SOCKET).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "fuse/io_counters.h"
#include "mount-tools/systemd_notify.h"

namespace bucketfs::tools {

class ServiceNotifier {
 public:
  struct Options {
    std::string mountpoint;  // stat()ed to prove the mount answers
    std::string source;      // "s3://bucket/prefix", for STATUS=
    std::chrono::milliseconds status_period{5000};
  };
  using CounterSource = std::function<fs::IoCountersSnapshot()>;

  ServiceNotifier(const SystemdNotifier& systemd, Options options, CounterSource counters);
  ~ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  // The mount is in place and the loop about to start: begin proving it.
  void MountReported() EXCLUDES(mu_);
  // The loop ended (signal 0 = unmounted from outside): STOPPING=1.
  void Stopping(int signal) EXCLUDES(mu_);
  // Ends the thread (after the session returned).
  void Stop() EXCLUDES(mu_);

  // "120 MB/s", "0 B/s": decimal units, as the benchmark tools print.
  static std::string ShowRate(double bytes_per_second);

 private:
  void Run() EXCLUDES(mu_);
  // Blocks until a stat of the mountpoint succeeds; false if told to stop first.
  bool WaitUntilMountAnswers() EXCLUDES(mu_);
  std::string StatusLine(const fs::IoCountersSnapshot& now, const fs::IoCountersSnapshot& before,
                         double seconds, bool stopping) const;

  const SystemdNotifier& systemd_;
  const Options options_;
  const CounterSource counters_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  int stop_signal_ GUARDED_BY(mu_) = 0;
  std::thread thread_;  // started by MountReported, joined by Stop
};

}  // namespace bucketfs::tools
