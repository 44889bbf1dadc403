#include "mount-tools/systemd_fd_store.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace bucketfs::tools {
namespace {

struct BusUnref {
  void operator()(sd_bus* b) const { sd_bus_flush_close_unref(b); }
};
using BusPtr = std::unique_ptr<sd_bus, BusUnref>;

// The manager's own bus socket: it answers without a D-Bus daemon (minimal
// containers have none); only root may connect, as only root runs the
// system instance's services with fd stores anyway.
BusPtr ConnectToManager() {
  sd_bus* raw = nullptr;
  if (sd_bus_new(&raw) < 0) return nullptr;
  BusPtr bus(raw);
  if (sd_bus_set_address(raw, "unix:path=/run/systemd/private") < 0 || sd_bus_start(raw) < 0) {
    sd_bus* system = nullptr;
    if (sd_bus_open_system(&system) < 0) return nullptr;
    return BusPtr(system);
  }
  return bus;
}

std::string GetString(sd_bus* bus, const char* path, const char* interface, const char* name) {
  sd_bus_error error{};  // SD_BUS_ERROR_NULL, without a C compound literal
  char* value = nullptr;
  std::string out;
  if (sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, interface, name, &error,
                                 &value) >= 0 &&
      value != nullptr) {
    out = value;
  }
  free(value);  // NOLINT(cppcoreguidelines-no-malloc): sd-bus allocates with malloc
  sd_bus_error_free(&error);
  return out;
}

}  // namespace

bool UnderServiceManager() {
  const char* socket = getenv("NOTIFY_SOCKET");
  return socket != nullptr && *socket != '\0';
}

Status StoreFd(int fd, const std::string& name) {
  if (!UnderServiceManager()) return Status::Ok();
  const std::string message = "FDSTORE=1\nFDNAME=" + name;
  const int r = sd_pid_notify_with_fds(0, 0, message.c_str(), &fd, 1);
  if (r <= 0) {
    return MakeError(r < 0 ? -r : EIO, "FdStore",
                     "cannot hand the " + name + " descriptor to the service manager" +
                         (r < 0 ? std::string(": ") + strerror(-r) : std::string()));
  }
  return Status::Ok();
}

void RemoveStoredFds(const std::string& name) {
  if (!UnderServiceManager()) return;
  const std::string message = "FDSTOREREMOVE=1\nFDNAME=" + name;
  sd_pid_notify(0, 0, message.c_str());
}

std::map<std::string, int> TakePassedFds() {
  std::map<std::string, int> out;
  char** names = nullptr;
  const int n = sd_listen_fds_with_names(/*unset_environment=*/1, &names);
  for (int i = 0; i < n; ++i) {
    const int fd = SD_LISTEN_FDS_START + i;
    const std::string name = names != nullptr && names[i] != nullptr ? names[i] : "";
    if (!out.emplace(name, fd).second) close(fd);
  }
  if (names != nullptr) {
    for (int i = 0; i < n; ++i) free(names[i]);  // NOLINT(cppcoreguidelines-no-malloc)
    free(names);                                 // NOLINT(cppcoreguidelines-no-malloc)
  }
  return out;
}

bool RestartIsPending() {
  if (!UnderServiceManager()) return false;
  char* unit_raw = nullptr;
  if (sd_pid_get_unit(0, &unit_raw) < 0 || unit_raw == nullptr) return false;
  const std::string unit = unit_raw;
  free(unit_raw);  // NOLINT(cppcoreguidelines-no-malloc)
  BusPtr bus = ConnectToManager();
  if (!bus) {
    spdlog::warn("cannot ask systemd whether {} restarts: unmounting", unit);
    return false;
  }
  char* path_raw = nullptr;
  if (sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit.c_str(), &path_raw) < 0) {
    return false;
  }
  const std::string unit_path = path_raw;
  free(path_raw);  // NOLINT(cppcoreguidelines-no-malloc)
  // Unit.Job is (job id, job object path); id 0: no job.
  sd_bus_error error{};  // SD_BUS_ERROR_NULL, without a C compound literal
  sd_bus_message* reply = nullptr;
  uint32_t job_id = 0;
  const char* job_path = nullptr;
  std::string job;
  if (sd_bus_get_property(bus.get(), "org.freedesktop.systemd1", unit_path.c_str(),
                          "org.freedesktop.systemd1.Unit", "Job", &error, &reply, "(uo)") >= 0 &&
      sd_bus_message_read(reply, "(uo)", &job_id, &job_path) >= 0 && job_id != 0 &&
      job_path != nullptr) {
    job = job_path;
  }
  sd_bus_message_unref(reply);
  sd_bus_error_free(&error);
  if (job.empty()) return false;
  const std::string type =
      GetString(bus.get(), job.c_str(), "org.freedesktop.systemd1.Job", "JobType");
  spdlog::info("systemd job for {}: {}", unit, type.empty() ? "unknown" : type);
  return type == "restart" || type == "try-restart" || type == "reload-or-restart";
}

}  // namespace bucketfs::tools
