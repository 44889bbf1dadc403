// Passthrough: see passthrough.h.
#include "fuse-adapter/passthrough.h"

#include <spdlog/spdlog.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

namespace bucketfs::fs {

BackingOps DeviceBackingOps(int dev_fd) {
  return BackingOps{
      .open = [dev_fd](int fd) -> Result<int32_t> {
        FuseBackingMap map{fd, 0, 0};
        const int id = ::ioctl(dev_fd, kFuseDevIocBackingOpen, &map);
        if (id < 0) {
          return MakeError(errno, "BackingOpen",
                           std::string("FUSE_DEV_IOC_BACKING_OPEN: ") + std::strerror(errno));
        }
        return static_cast<int32_t>(id);
      },
      .close =
          [dev_fd](int32_t id) {
            auto raw = static_cast<uint32_t>(id);
            if (::ioctl(dev_fd, kFuseDevIocBackingClose, &raw) != 0) {
              spdlog::warn("FUSE_DEV_IOC_BACKING_CLOSE {}: {}", id, std::strerror(errno));
            }
          },
  };
}

std::optional<int32_t> PassthroughTable::OnOpen(uint64_t ino, uint64_t fh,
                                                std::shared_ptr<void> copy, int copy_fd) {
  MutexLock lock(mu_);
  Inode& in = inodes_[ino];
  if (in.passthrough > 0) {
    // The kernel requires the same backing file for every open of the inode.
    ++in.passthrough;
    handles_[fh] = {ino, true};
    ++passthrough_opens_;
    return in.backing_id;
  }
  if (in.served > 0 || copy == nullptr) {
    ++in.served;
    handles_[fh] = {ino, false};
    return std::nullopt;
  }
  auto id = ops_.open(copy_fd);
  if (!id.ok()) {
    if (refusals_++ == 0) {
      spdlog::warn("passthrough refused by the kernel ({}); reads are served by the daemon",
                   id.error().message);
    }
    ++in.served;
    handles_[fh] = {ino, false};
    return std::nullopt;
  }
  in.passthrough = 1;
  in.backing_id = *id;
  in.copy = std::move(copy);
  handles_[fh] = {ino, true};
  ++passthrough_opens_;
  return *id;
}

void PassthroughTable::OnRelease(uint64_t fh) {
  int32_t close_id = -1;
  std::shared_ptr<void> unpin;  // dropped after the lock
  {
    MutexLock lock(mu_);
    auto h = handles_.find(fh);
    if (h == handles_.end()) return;
    auto in = inodes_.find(h->second.ino);
    if (in != inodes_.end()) {
      if (h->second.passthrough) {
        if (--in->second.passthrough == 0) {
          close_id = in->second.backing_id;
          unpin = std::move(in->second.copy);
        }
      } else {
        --in->second.served;
      }
      if (in->second.passthrough == 0 && in->second.served == 0) inodes_.erase(in);
    }
    handles_.erase(h);
  }
  if (close_id >= 0) ops_.close(close_id);
}

uint64_t PassthroughTable::passthrough_opens() const {
  MutexLock lock(mu_);
  return passthrough_opens_;
}

uint64_t PassthroughTable::refusals() const {
  MutexLock lock(mu_);
  return refusals_;
}

size_t PassthroughTable::inodes() const {
  MutexLock lock(mu_);
  return inodes_.size();
}

}  // namespace bucketfs::fs
