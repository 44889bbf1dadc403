// SystemdNotifier: the sd_notify(3) protocol, for a daemon that a unit of
// Type=notify starts. Without NOTIFY_SOCKET (a shell, a test, mount(8)) it
// does nothing, so callers never ask whether systemd is there.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace bucketfs::tools {

class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID now.
  SystemdNotifier();
  // One that never sends: a detached daemon is not the unit's main process,
  // and systemd (NotifyAccess=main) would drop what it sends.
  static SystemdNotifier Disabled() { return SystemdNotifier(false); }

  bool enabled() const { return enabled_; }
  // Sends newline-separated assignments ("READY=1\nSTATUS=..."); false when
  // disabled or the send failed (systemd gone: nothing to do about it).
  bool Notify(const std::string& state) const;
  // How often to send WATCHDOG=1: half of WATCHDOG_USEC, when the unit has
  // WatchdogSec= and the watchdog is meant for this process.
  std::optional<std::chrono::microseconds> watchdog_period() const { return watchdog_period_; }

 private:
  explicit SystemdNotifier(bool /*disabled*/) {}

  bool enabled_ = false;
  std::optional<std::chrono::microseconds> watchdog_period_;
};

}  // namespace bucketfs::tools
