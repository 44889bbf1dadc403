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

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
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

// Restart without unmounting: what the session needs to leave its mount to
// a successor daemon, or to take over the one a predecessor left. The kernel
// keeps a FUSE mount alive while some process holds its /dev/fuse descriptor
// (keep_fd hands it to one: systemd's file descriptor store, or the next
// daemon); the successor replays the INIT the kernel sent once, and the
// kernel resends the requests that were read but not answered.
struct SessionHandover {
  // Takeover: the live mount's /dev/fuse descriptor (the session owns it from
  // now on) and the INIT request its first daemon answered; -1: mount anew.
  int takeover_fd = -1;
  std::vector<std::byte> takeover_init;
  // Mounting anew: called with the kernel's INIT request, for a successor.
  std::function<void(std::span<const std::byte>)> record_init;
  // Called once with the mount's descriptor (mounted or taken over).
  std::function<void(int fd)> keep_fd;
  // Called when the loop ends: true leaves the mount in place for a
  // successor (no unmount); false or unset unmounts as usual.
  std::function<bool()> hand_over_at_exit;
};

// What the caller hears of the session's life; every member may be empty.
struct FuseSessionEvents {
  // Called exactly once: with Ok just before the loop starts serving (the
  // kernel's first requests, INIT included, wait for the loop), or with the
  // error when mounting failed (the daemonizing parent waits on it).
  std::function<void(Status)> on_mount_result;
  // Called once when the loop has ended (SIGTERM/SIGINT/SIGHUP, or unmounted
  // from outside), before the uploads still open are finished and the
  // mount is removed. `signal` is the signal that ended it, 0 for an
  // unmount. The service manager hears "stopping" here.
  std::function<void(int signal)> on_loop_ended;
};

// Mounts `fs` at `mount.mountpoint` and serves it until unmounted or
// signalled, telling `events` what happens. Returns the process exit code: 0 on a
// clean unmount, non-zero when mounting failed or uploads could not finish.
// With `handover` (may be null), the session can be handed over (see
// SessionHandover); each worker thread then reads the one descriptor, which
// is the one a successor gets. `observer` (may be null) hears of every
// operation answered; it must outlive the call.
int RunFuseSession(Filesystem& fs, const FuseMountOptions& mount, FuseSessionEvents events,
                   const SessionHandover* handover = nullptr, FuseObserver* observer = nullptr);

// The same with only a mount-result callback.
int RunFuseSession(Filesystem& fs, const FuseMountOptions& mount,
                   std::function<void(Status)> on_mount_result,
                   const SessionHandover* handover = nullptr, FuseObserver* observer = nullptr);

}  // namespace bucketfs::fs
