// Restart without unmounting, for a mount served under systemd: the mount's
// /dev/fuse descriptor and its session journal live in the service's file
// descriptor store (systemd_fd_store.h), so that `systemctl restart`, or a
// crash with Restart=on-failure, starts a daemon that takes the live mount
// over instead of a mount that processes using it lose (ENOTCONN).
//
// The service needs FileDescriptorStoreMax= of at least 2 (systemd/).
#pragma once

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
  // Set when this daemon left the mount to a successor.
  std::shared_ptr<bool> handed_over = std::make_shared<bool>(false);
};

// True when the service manager passed a live mount to take over.
bool HasMountToTakeOver(const std::map<std::string, int>& passed);

// Null when handover does not apply (not under a service manager). With a
// mount to take over in `passed`, adopts its journal and descriptor; else
// starts a new journal and keeps it, and the descriptor once mounted, in
// the store. Errors: a passed journal that cannot be read.
Result<std::unique_ptr<MountHandover>> SetUpMountHandover(std::map<std::string, int> passed);

// After the session ended without handing over: the store keeps nothing.
void ForgetStoredMount();

}  // namespace bucketfs::tools
