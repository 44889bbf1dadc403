#include "mount-tools/mount_upgrade.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/strings.h"
#include "mount-tools/systemd_fd_store.h"

namespace bucketfs::tools {
namespace {

// Long enough for the uploads a handover waits for; a stuck daemon still
// lets `bucketfs upgrade` go with a message.
constexpr int kSessionEndWaitMs = 15 * 60 * 1000;

Result<std::string> Unhex(std::string_view s) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (s.size() % 2 != 0) return MakeError(EPROTO, "Handoff", "odd-length hex value");
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = digit(s[i]);
    const int lo = digit(s[i + 1]);
    if (hi < 0 || lo < 0) return MakeError(EPROTO, "Handoff", "bad hex value");
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// A /proc file of NUL-terminated strings (cmdline, environ).
std::vector<std::string> ReadNulList(const char* path) {
  std::ifstream in(path, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  for (std::string_view item : base::Split(all, '\0')) out.emplace_back(item);
  return out;
}

}  // namespace

Result<std::map<std::string, int>> TakeUpgradeFds() {
  std::map<std::string, int> out;
  const char* raw = std::getenv(kTakeoverFdsEnv);
  if (raw == nullptr) return out;
  const std::string value = raw;
  ::unsetenv(kTakeoverFdsEnv);
  for (std::string_view piece : base::Split(value, ',')) {
    const std::string item(piece);
    const size_t eq = item.find('=');
    char* tail = nullptr;
    const long fd = eq == std::string::npos ? -1 : std::strtol(item.c_str() + eq + 1, &tail, 10);
    if (fd < 0 || tail == nullptr || *tail != '\0' || fd > 1 << 20 ||
        ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC) != 0) {
      for (auto& [name, open_fd] : out) ::close(open_fd);
      return MakeError(EBADF, "Takeover",
                       std::string(kTakeoverFdsEnv) + ": '" + item + "' is not NAME=OPEN_FD");
    }
    out[item.substr(0, eq)] = static_cast<int>(fd);
  }
  return out;
}

std::string FormatUpgradeHandoff(const UpgradeHandoff& h) {
  std::string out = "cwd=" + base::HexLower(h.cwd) + "\n";
  for (const std::string& a : h.args) out += "arg=" + base::HexLower(a) + "\n";
  for (const std::string& e : h.env) out += "env=" + base::HexLower(e) + "\n";
  return out;
}

Result<UpgradeHandoff> ParseUpgradeHandoff(const std::string& body) {
  UpgradeHandoff h;
  for (std::string_view line : base::Split(body, '\n')) {
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq);
    auto value = Unhex(line.substr(eq + 1));
    if (!value.ok()) return value.error();
    if (key == "cwd") h.cwd = *value;
    if (key == "arg") h.args.push_back(*value);
    if (key == "env") h.env.push_back(*value);
  }
  if (h.args.size() < 2 || h.cwd.empty()) {
    return MakeError(EPROTO, "Handoff", "the daemon's answer lacks its arguments");
  }
  return h;
}

MountUpgrade::MountUpgrade(MountHandover& handover, std::string start_cwd)
    : handover_(handover), start_cwd_(std::move(start_cwd)), ended_fd_(::eventfd(0, EFD_CLOEXEC)) {}

MountUpgrade::~MountUpgrade() {
  if (ended_fd_ >= 0) ::close(ended_fd_);
}

void MountUpgrade::SessionEnded() {
  const uint64_t one = 1;
  (void)!::write(ended_fd_, &one, sizeof(one));
}

Result<ControlAnswer> MountUpgrade::Handle(const ControlRequest&, int stop_fd) {
  MountHandover::Flags& flags = *handover_.flags;
  if (UnderServiceManager()) {
    return MakeError(EPERM, "Upgrade",
                     "this mount is run by a service manager: restart its service instead "
                     "(systemctl restart), which keeps the mount across the restart");
  }
  if (!handover_.journal->healthy()) {
    return MakeError(EIO, "Upgrade",
                     "this daemon's session journal is incomplete (out of memory?): it cannot "
                     "hand the mount over");
  }
  if (flags.kept_fuse_fd < 0 || ended_fd_ < 0) {
    return MakeError(EAGAIN, "Upgrade", "the mount is not being served yet");
  }
  if (flags.upgrade_requested.exchange(true)) {
    return MakeError(EBUSY, "Upgrade", "a handover of this mount is already under way");
  }
  UpgradeHandoff handoff{start_cwd_, ReadNulList("/proc/self/cmdline"),
                         ReadNulList("/proc/self/environ")};
  spdlog::info("bucketfs upgrade: handing the mount over to a new process");
  // Ends the loop the way SIGTERM does; hand_over_at_exit then sees the request.
  ::kill(::getpid(), SIGTERM);
  pollfd p[2] = {{ended_fd_, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  int ready = 0;
  do {
    ready = ::poll(p, 2, kSessionEndWaitMs);
  } while (ready < 0 && errno == EINTR);
  if ((p[0].revents & POLLIN) == 0) {
    return MakeError(ETIMEDOUT, "Upgrade",
                     "the daemon did not finish its session for the handover (see its log)");
  }
  if (!flags.handed_over) {
    return MakeError(EIO, "Upgrade",
                     "the daemon unmounted instead of handing the mount over (see its log)");
  }
  return ControlAnswer(FormatUpgradeHandoff(handoff),
                       {flags.kept_fuse_fd.load(), handover_.journal->fd()});
}

}  // namespace bucketfs::tools
