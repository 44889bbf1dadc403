// `bucketfs upgrade MOUNTPOINT`: replaces the daemon of a live mount with a
// new process of this binary (the one running this command, so: install
// the new version, then run its `bucketfs upgrade`), without unmounting.
// The old daemon hands over through its control socket (mount_upgrade.h);
// this process then becomes the new daemon: it starts with the old one's
// arguments, environment and working directory, takes the mount over, and
// exits (detaching as the old one did) once the mount answers again.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mount-tools/commands.h"
#include "mount-tools/control_paths.h"
#include "mount-tools/control_socket.h"
#include "mount-tools/mount_upgrade.h"

namespace bucketfs::tools {
namespace {

// Finishing uploads can take a while; the daemon gives up after 15 minutes.
constexpr int kReplyWaitMs = 16 * 60 * 1000;

void PrintUsage(FILE* out) {
  std::fputs(
      "usage: bucketfs upgrade MOUNTPOINT\n"
      "Replaces the daemon serving MOUNTPOINT with this bucketfs binary without unmounting:\n"
      "processes reading the mount go on, files open for writing fail with EIO. The old\n"
      "daemon first finishes its background uploads. The new daemon starts with the old\n"
      "one's options. For a mount run by systemd, use `systemctl restart` instead.\n",
      out);
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

int RunUpgradeCommand(int argc, char** argv) {
  std::string mountpoint;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      PrintUsage(stdout);
      return 0;
    }
    if (a.starts_with("-") || !mountpoint.empty()) {
      std::fprintf(stderr, "bucketfs upgrade: unexpected argument '%s'\n", a.c_str());
      PrintUsage(stderr);
      return 2;
    }
    mountpoint = a;
  }
  if (mountpoint.empty()) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string canonical = CanonicalPath(mountpoint);
  const std::string socket = ControlSocketPath(ControlSocketDir(), canonical);
  auto answer = CallControl(socket, "handover", kReplyWaitMs);
  if (!answer.ok()) {
    const int e = answer.error().errno_value;
    std::fprintf(stderr, "bucketfs upgrade: %s: %s\n", canonical.c_str(),
                 e == ENOENT || e == ECONNREFUSED
                     ? "no bucketfs daemon of this user answers for this mountpoint"
                     : answer.error().message.c_str());
    return 1;
  }
  // From here the mount lives only through the descriptors this process holds.
  auto handoff = ParseUpgradeHandoff(answer->body);
  if (!handoff.ok() || answer->fds.size() != 2) {
    std::fprintf(stderr,
                 "bucketfs upgrade: the daemon's handover was incomplete (%s); the mount at %s is "
                 "lost: unmount it with `fusermount3 -uz %s`\n",
                 handoff.ok() ? "descriptors missing" : handoff.error().message.c_str(),
                 canonical.c_str(), canonical.c_str());
    return 1;
  }
  const int fuse_fd = answer->fds[0];
  const int journal_fd = answer->fds[1];
  // Received close-on-exec; the new daemon must inherit them.
  ::fcntl(fuse_fd, F_SETFD, 0);
  ::fcntl(journal_fd, F_SETFD, 0);
  std::vector<std::string> env;
  const std::string prefix = std::string(kTakeoverFdsEnv) + "=";
  for (std::string& e : handoff->env) {
    if (!e.starts_with(prefix)) env.push_back(std::move(e));
  }
  env.push_back(prefix + "fuse=" + std::to_string(fuse_fd) +
                ",journal=" + std::to_string(journal_fd));
  if (::chdir(handoff->cwd.c_str()) != 0) {
    std::fprintf(stderr,
                 "bucketfs upgrade: cannot enter %s (the old daemon's start directory): %s\n",
                 handoff->cwd.c_str(), std::strerror(errno));
    (void)!::chdir("/");
  }
  std::fprintf(stderr, "bucketfs upgrade: the old daemon handed %s over; starting the new one\n",
               canonical.c_str());
  std::vector<char*> args = Pointers(handoff->args);
  std::vector<char*> envp = Pointers(env);
  ::execve("/proc/self/exe", args.data(), envp.data());
  std::fprintf(stderr,
               "bucketfs upgrade: cannot start the new daemon: %s; the mount at %s is lost: "
               "unmount it with `fusermount3 -uz %s`\n",
               std::strerror(errno), canonical.c_str(), canonical.c_str());
  return 1;
}

}  // namespace bucketfs::tools
