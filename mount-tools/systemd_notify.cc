#include "mount-tools/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstdlib>

namespace bucketfs::tools {

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  uint64_t usec = 0;
  if (enabled_ && sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0 && usec > 0) {
    watchdog_period_ = std::chrono::microseconds(usec / 2);
  }
}

bool SystemdNotifier::Notify(const std::string& state) const {
  if (!enabled_) return false;
  return sd_notify(/*unset_environment=*/0, state.c_str()) > 0;
}

}  // namespace bucketfs::tools
