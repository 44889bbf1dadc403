// The service manager's file descriptor store (sd_notify FDSTORE=1), through
// which a mount outlives a restart of its daemon: systemd keeps the mount's
// /dev/fuse descriptor and its session journal while the daemon restarts,
// and passes them to the next one (sd_listen_fds).
//
// Outside systemd (NOTIFY_SOCKET unset) every call does nothing.
#pragma once

#include <map>
#include <string>

#include "s3/result.h"

namespace bucketfs::tools {

inline constexpr const char* kFuseFdName = "fuse";
inline constexpr const char* kJournalFdName = "journal";

// True when a service manager listens (NOTIFY_SOCKET is set).
bool UnderServiceManager();

// Hands a copy of `fd` to the store under `name`.
Status StoreFd(int fd, const std::string& name);

// Drops the store's descriptors named `name` (a clean stop: nothing to keep).
void RemoveStoredFds(const std::string& name);

// The descriptors the manager passed to this process, by name (each at most
// once; extra ones of the same name are closed). Unsets LISTEN_* so that
// children do not see them.
std::map<std::string, int> TakePassedFds();

// True when the service manager is stopping this service only to start it
// again (systemctl restart, try-restart): the job that sent SIGTERM is a
// restart. False outside systemd, on a plain stop, or when it cannot tell.
bool RestartIsPending();

}  // namespace bucketfs::tools
