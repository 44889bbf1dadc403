// Where the control sockets of mounts live: <runtime dir>/bucketfs/
// <escaped mountpoint>.sock, the runtime dir being /run for root and
// $XDG_RUNTIME_DIR otherwise (/tmp/bucketfs-<uid> when it is unset). Pure
// apart from ControlSocketDir's environment read and MakeControlSocketDir.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::tools {

// The directory for `uid`; `xdg_runtime_dir` is $XDG_RUNTIME_DIR (may be empty).
std::string ControlSocketDirFor(uid_t uid, std::string_view xdg_runtime_dir);
// The same for this process; $BUCKETFS_CONTROL_DIR, when set, instead.
std::string ControlSocketDir();
// Creates the directory (mode 0700) when missing.
Status MakeControlSocketDir(const std::string& dir);

// systemd-style escape of an absolute path: "/mnt/my data" -> "mnt-my\x20data";
// "/" -> "-". Reversible with UnescapeMountpoint.
std::string EscapeMountpoint(std::string_view path);
std::string UnescapeMountpoint(std::string_view name);

// `path` with symlinks resolved (as the daemon saw its mountpoint); `path`
// itself when it cannot be resolved.
std::string CanonicalPath(const std::string& path);

// <dir>/<escaped>.sock
std::string ControlSocketPath(const std::string& dir, std::string_view mountpoint);

}  // namespace bucketfs::tools
