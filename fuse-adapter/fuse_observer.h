// FuseObserver: what the FUSE adapter tells about each operation it answers,
// for metrics. The adapter does not know the metrics registry; the
// composition root passes an observer that counts (mount-tools/
// mount_metrics.h), or none. Calls come from FUSE worker threads (and, for
// reads answered later, from the threads that complete fetches): they must
// be cheap and must not block. No libfuse here, so mount-tools can include it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace bucketfs::fs {

enum class FuseOp : uint8_t {
  kLookup,
  kForget,
  kGetAttr,
  kSetAttr,
  kOpen,
  kRead,
  kWrite,
  kFlush,
  kFsync,
  kRelease,
  kFsyncDir,
  kCreate,
  kOpenDir,
  kReadDir,
  kReadDirPlus,
  kReleaseDir,
  kStatFs,
  kMkdir,
  kRmdir,
  kUnlink,
  kRename,
  kSymlink,
  kReadLink,
  kMknod,
};
inline constexpr int kFuseOpCount = static_cast<int>(FuseOp::kMknod) + 1;

// "lookup", "read", "readdirplus", ...: label values.
std::string_view FuseOpName(FuseOp op);

class FuseObserver {
 public:
  virtual ~FuseObserver() = default;
  // An operation was answered `latency` after the kernel's request reached
  // the daemon (for reads answered later: when the reply went out).
  virtual void OnOp(FuseOp op, std::chrono::nanoseconds latency) = 0;
  // An error reply, by errno (positive).
  virtual void OnError(FuseOp op, int errno_value) = 0;
  // Bytes returned by READ and accepted by WRITE.
  virtual void OnRead(uint64_t bytes) = 0;
  virtual void OnWrite(uint64_t bytes) = 0;
};

}  // namespace bucketfs::fs
