#include "fuse-adapter/fuse_observer.h"

#include <array>

namespace bucketfs::fs {

std::string_view FuseOpName(FuseOp op) {
  static constexpr std::array<std::string_view, kFuseOpCount> kNames = {
      "lookup", "forget",  "getattr",  "setattr", "open",    "read",    "write",       "flush",
      "fsync",  "release", "fsyncdir", "create",  "opendir", "readdir", "readdirplus", "releasedir",
      "statfs", "mkdir",   "rmdir",    "unlink",  "rename",  "symlink", "readlink",    "mknod"};
  const auto i = static_cast<size_t>(op);
  return i < kNames.size() ? kNames[i] : "other";
}

}  // namespace bucketfs::fs
