// `bucketfs upgrade MOUNTPOINT` outside systemd: a running daemon hands its
// live mount (the /dev/fuse descriptor and the session journal, see
// mount_handover.h) to a new bucketfs process over the mount's control
// socket, and processes using the mount go on working.
//
// The daemon's side is the control command `handover`: it ends the FUSE
// loop as SIGTERM would, but leaves the mount in place, waits until the
// session is ready for a successor (uploads finished, see
// Filesystem::PrepareHandover), and answers with the two descriptors and
// what the successor needs to start like the daemon did (arguments,
// environment, working directory). The new process finds the descriptors
// through kTakeoverFdsEnv (TakeUpgradeFds).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "mount-tools/control_socket.h"
#include "mount-tools/mount_handover.h"

namespace bucketfs::tools {

// "fuse=FD,journal=FD": set by `bucketfs upgrade` for the process it starts.
inline constexpr const char* kTakeoverFdsEnv = "BUCKETFS_TAKEOVER_FDS";

// The descriptors `bucketfs upgrade` passed, by name (empty when none), and
// unsets the variable so that children do not see it. Errors: a malformed
// value or a descriptor that is not open.
Result<std::map<std::string, int>> TakeUpgradeFds();

// What the daemon tells its successor, and its text form (key=value lines,
// values hex-encoded: arguments may hold any byte but NUL).
struct UpgradeHandoff {
  std::string cwd;
  std::vector<std::string> args;  // argv, argv[0] included
  std::vector<std::string> env;   // NAME=VALUE
};
std::string FormatUpgradeHandoff(const UpgradeHandoff& h);
Result<UpgradeHandoff> ParseUpgradeHandoff(const std::string& body);

class MountUpgrade {
 public:
  // `start_cwd`: the working directory the mount command started in (the
  // daemon has left it since), so that relative arguments mean the same.
  MountUpgrade(MountHandover& handover, std::string start_cwd);
  ~MountUpgrade();
  MountUpgrade(const MountUpgrade&) = delete;
  MountUpgrade& operator=(const MountUpgrade&) = delete;

  // The control command `handover`.
  Result<ControlAnswer> Handle(const ControlRequest& request, int stop_fd);
  // The mount command calls this once the session has ended, handed over or not.
  void SessionEnded();

 private:
  MountHandover& handover_;
  const std::string start_cwd_;
  const int ended_fd_;  // eventfd, readable once the session ended
};

}  // namespace bucketfs::tools
