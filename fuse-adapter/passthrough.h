// Passthrough: FUSE passthrough (Linux 6.9+) of read-only opens to verified
// local cache files, the raw protocol libfuse 3.14 has no API for.
//
// The kernel reads a passthrough file's bytes from a backing file the daemon
// registered (FUSE_DEV_IOC_BACKING_OPEN on /dev/fuse, which needs
// CAP_SYS_ADMIN) and named in its open reply (fuse_open_out.backing_id with
// FOPEN_PASSTHROUGH); reads and mmap then never reach the daemon. The kernel
// insists that while one open of an inode is passthrough, every open of it
// is, with the same backing file, and that no passthrough open starts while
// the inode has cached opens (it fails the open with EIO otherwise). So the
// table decides per inode: an open joins the inode's passthrough if there is
// one, is served by the daemon if the inode has served opens, and otherwise
// starts passthrough when a verified local copy exists. The backing id is
// closed when the inode's last passthrough handle is released.
//
// The ioctls go through BackingOps so the table is testable without a
// kernel. Thread-safe.
#pragma once

#include <sys/ioctl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "s3/result.h"

namespace bucketfs::fs {

// linux/fuse.h 7.40, which the machine's header may predate.
inline constexpr uint32_t kFopenPassthrough = 1u << 7;
struct FuseBackingMap {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
inline constexpr unsigned long kFuseDevIocBackingOpen = _IOW(229, 1, FuseBackingMap);
inline constexpr unsigned long kFuseDevIocBackingClose = _IOW(229, 2, uint32_t);
// fuse_open_out since 7.40: the former padding is the backing id.
struct FuseOpenOut {
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;
};
static_assert(sizeof(FuseOpenOut) == 16, "fuse_open_out is 16 bytes");

// Registering and dropping backing files.
struct BackingOps {
  std::function<Result<int32_t>(int fd)> open;
  std::function<void(int32_t id)> close;
};
// The real ones, on the session's /dev/fuse descriptor.
BackingOps DeviceBackingOps(int dev_fd);

class PassthroughTable {
 public:
  explicit PassthroughTable(BackingOps ops) : ops_(std::move(ops)) {}

  // An open of `ino` answered as handle `fh`. `copy` (may be null) pins a
  // verified local copy of the object, `copy_fd` its descriptor. Returns the
  // backing id to answer with, or nullopt: served by the daemon.
  std::optional<int32_t> OnOpen(uint64_t ino, uint64_t fh, std::shared_ptr<void> copy, int copy_fd)
      EXCLUDES(mu_);
  // The handle was released (or its open reply never reached the kernel).
  void OnRelease(uint64_t fh) EXCLUDES(mu_);

  // Opens that went through passthrough, and registrations refused.
  uint64_t passthrough_opens() const EXCLUDES(mu_);
  uint64_t refusals() const EXCLUDES(mu_);
  size_t inodes() const EXCLUDES(mu_);  // inodes with open handles (tests)

 private:
  struct Inode {
    int passthrough = 0;  // open passthrough handles
    int served = 0;       // open handles the daemon serves
    int32_t backing_id = -1;
    std::shared_ptr<void> copy;  // pinned while passthrough handles are open
  };
  struct Handle {
    uint64_t ino = 0;
    bool passthrough = false;
  };

  const BackingOps ops_;
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Inode> inodes_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Handle> handles_ GUARDED_BY(mu_);
  uint64_t passthrough_opens_ GUARDED_BY(mu_) = 0;
  uint64_t refusals_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::fs
