// Stub: replaced by the real session in the next commit.
#include "fuse/fuse_session.h"

namespace bucketfs::fs {

int RunFuseSession(std::shared_ptr<s3::ObjectClient> /*client*/, const FsConfig& /*config*/,
                   const FuseMountOptions& /*mount*/, std::function<void(Status)> on_mount_result) {
  if (on_mount_result) on_mount_result(MakeError(ENOSYS, "NotImplemented", "mount not ready"));
  return 1;
}

}  // namespace bucketfs::fs
