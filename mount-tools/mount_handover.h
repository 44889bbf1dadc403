// Restart without unmounting. Every mount keeps a session journal and a
// copy of its /dev/fuse descriptor, so that a successor daemon can take the
// live mount over instead of a mount that processes using it lose
// (ENOTCONN). Under systemd both also live in the service's file descriptor
// store (systemd_fd_store.h): `systemctl restart`, or a crash with
// Restart=on-failure, starts a daemon that takes them over; the service
// needs FileDescriptorStoreMax= of at least 2 (systemd/). Outside systemd,
// `bucketfs upgrade` passes them over the control socket (mount_upgrade.h).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "fuse-adapter/fuse_session.h"
#include "handover/session_journal.h"
#include "s3/result.h"

namespace bucketfs::tools {

struct MountHandover {
  std::shared_ptr<handover::SessionJournal> journal;
  // Takeover: what the previous daemon recorded (Filesystem::Restore).
  bool takeover = false;
  handover::SessionState restored;
  fs::SessionHandover session;
  // Shared with the session's callbacks, which run on the main thread, and
  // read by the control socket's thread (mount_upgrade.h).
  struct Flags {
    std::atomic<bool> upgrade_requested{false};  // `bucketfs upgrade` asked for the mount
    std::atomic<bool> handed_over{false};        // this daemon left the mount to a successor
    std::atomic<int> kept_fuse_fd{-1};           // this process's copy, for a successor
  };
  std::shared_ptr<Flags> flags = std::make_shared<Flags>();
};

// True when `passed` holds a live mount to take over.
bool HasMountToTakeOver(const std::map<std::string, int>& passed);

// With a mount to take over in `passed` (from the service manager or
// `bucketfs upgrade`), adopts its journal and descriptor; else starts a new
// journal and keeps it, and a copy of the descriptor once mounted (in the
// service manager's store too, when there is one). Errors: a passed
// journal that cannot be read or that never saw the kernel's INIT.
Result<std::unique_ptr<MountHandover>> SetUpMountHandover(std::map<std::string, int> passed);

// After the session ended without handing over: the store keeps nothing.
void ForgetStoredMount();

}  // namespace bucketfs::tools
