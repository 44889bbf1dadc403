// InitFlagsIo: the session's /dev/fuse I/O (libfuse's fuse_custom_io), which
// passes every request and reply through unchanged except one: the reply to
// the kernel's INIT gets the INIT flags libfuse 3.14 cannot negotiate, when
// the kernel offered them.
//
// Why: libfuse 3.14 builds the INIT reply from its own capability list, which
// ends at protocol 7.38, and drops FUSE_PARALLEL_DIROPS from it although its
// FUSE_CAP_PARALLEL_DIROPS is wanted by default: the kernel then serializes
// LOOKUP and READDIR per directory. FUSE_DIRECT_IO_ALLOW_MMAP (7.39, a flags2
// bit) is what lets MAP_SHARED mmap work on FOPEN_DIRECT_IO files
// (--direct-io); without it mmap() fails with ENODEV. It changes nothing else
// in the kernel: it is only read in fuse_file_mmap().
//
// How: Read sees each request libfuse reads; while INIT is outstanding it
// records the INIT request's unique id and the kernel's flags (flags, plus
// flags2 << 32 when FUSE_INIT_EXT is set). Writev, for the reply with that
// unique id and no error, ORs `wanted & offered` into fuse_init_out.flags and
// .flags2 (with FUSE_INIT_EXT when a flags2 bit is added). Every other
// request and reply is read and written as libfuse would (read(2), writev(2),
// splice(2)), so libfuse's splice capabilities stay what they are without
// custom I/O.
//
// Taking a live mount over (a restarted daemon): libfuse's session answers
// nothing before INIT, but the kernel sends INIT only once per mount. With
// ReplayInit, the first Read returns the INIT request the previous daemon was
// sent (other threads' reads wait until it is answered), its reply is
// swallowed, and then FUSE_NOTIFY_RESEND asks the kernel to send again every
// request the previous daemon had read but not answered.
//
// Thread-safe: libfuse calls Read and Writev from every worker thread.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::fs {

// linux/fuse.h 7.39; the machine's header may predate it.
inline constexpr uint64_t kFuseDirectIoAllowMmap = 1ull << 36;
// linux/fuse.h 7.25 (FUSE_PARALLEL_DIROPS), which libfuse 3.14 never sends.
inline constexpr uint64_t kFuseParallelDirops = 1ull << 18;
// linux/fuse.h 7.40 (FUSE_PASSTHROUGH): opens may hand reads to a backing
// file (passthrough.h). The reply then also carries max_stack_depth.
inline constexpr uint64_t kFusePassthrough = 1ull << 37;
// fuse_init_out.max_stack_depth (7.40) sits right after flags2: 1 lets the
// backing file be on any non-stacked file system (ext4, xfs), and this mount
// stay stackable under overlayfs.
inline constexpr uint32_t kPassthroughStackDepth = 1;
// linux/fuse.h 7.40 notification code (FUSE_NOTIFY_RESEND).
inline constexpr int32_t kFuseNotifyResend = 7;

class InitFlagsIo {
 public:
  // `wanted`: 64-bit INIT flags (linux/fuse.h numbering) to add to the reply
  // when the kernel's INIT request offers them.
  explicit InitFlagsIo(uint64_t wanted) : wanted_(wanted) {}

  // The fuse_custom_io callbacks' bodies.
  ssize_t Read(int fd, void* buf, size_t len);
  ssize_t Writev(int fd, iovec* iov, int count);

  // The kernel's INIT flags (0 before INIT), and what the reply got added.
  uint64_t offered() const { return offered_.load(std::memory_order_acquire); }
  uint64_t added() const { return added_.load(std::memory_order_acquire); }

  // Called with the kernel's INIT request as read (for a successor's replay).
  // REQUIRES: set before the session reads.
  void OnInitRequest(std::function<void(std::span<const std::byte>)> record) {
    record_init_ = std::move(record);
  }
  // Serve a mount whose INIT a previous daemon answered: see the top.
  // REQUIRES: called before the session reads.
  void ReplayInit(std::vector<std::byte> request);
  // False until the replayed INIT was answered and the kernel was asked to
  // resend; true at once without a replay.
  bool resent() const { return resent_.load(std::memory_order_acquire); }

  // The two steps, without a device (unit tests): a request as read from
  // /dev/fuse, and a reply about to be written (header in iov[0], as libfuse
  // sends every reply). PatchReply may change the bytes iov points to.
  void SeeRequest(std::span<const std::byte> request);
  void PatchReply(iovec* iov, int count);

 private:
  const uint64_t wanted_;
  std::atomic<bool> init_pending_{false};
  std::atomic<bool> init_done_{false};  // no request needs a look any more
  std::atomic<uint64_t> init_unique_{0};
  std::atomic<uint64_t> offered_{0};
  std::atomic<uint64_t> added_{0};
  std::function<void(std::span<const std::byte>)> record_init_;

  // Replay of a previous daemon's INIT.
  bool SwallowReplayReply(int fd, const iovec* iov, int count);
  Mutex replay_mu_;
  CondVar replay_cv_;
  std::vector<std::byte> replay_ GUARDED_BY(replay_mu_);
  bool replay_handed_out_ GUARDED_BY(replay_mu_) = false;
  bool replay_answered_ GUARDED_BY(replay_mu_) = true;
  std::atomic<bool> replaying_{false};
  std::atomic<bool> resent_{true};
};

}  // namespace bucketfs::fs
