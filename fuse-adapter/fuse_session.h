// RunFuseSession: the libfuse3 edge of bucketfs. It mounts a filesystem core
// that the composition root built (mount-tools/mount_wiring.h) with libfuse's
// low-level API, serves requests on a multithreaded loop, and when the loop
// ends (SIGTERM/SIGINT/SIGHUP, or `fusermount3 -u` / `umount` from outside)
// finishes every open upload before it unmounts and returns.
//
// The mount command (mount-tools/) owns option parsing, daemonizing, logging
// and building the components; it calls this once and exits with its return
// value.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fuse-adapter/fuse_observer.h"
#include "fuse/filesystem.h"
#include "s3/result.h"

namespace bucketfs::fs {

struct FuseMountOptions {
  std::string mountpoint;
  bool allow_other = false;
  bool allow_root = false;
  bool foreground = true;  // informational: daemonizing is the caller's job
  // Raw -o entries passed to libfuse, e.g. "fsname=bucketfs", "default_permissions".
  std::vector<std::string> fuse_options;
  int max_threads = 16;  // max idle worker threads of the session loop
  bool debug = false;    // libfuse's own request trace ("-d") on stderr
};

// Mounts `fs` at `mount.mountpoint` and serves it until unmounted or
// signalled. `on_mount_result` (may be empty) is called exactly once: with
// Ok once the mount is serving, or with the error when mounting failed (the
// daemonizing parent waits on it). Returns the process exit code: 0 on a
// clean unmount, non-zero when mounting failed or uploads could not finish.
// `observer` (may be null) hears of every operation answered; it must
// outlive the call.
int RunFuseSession(Filesystem& fs, const FuseMountOptions& mount,
                   std::function<void(Status)> on_mount_result, FuseObserver* observer = nullptr);

}  // namespace bucketfs::fs
