#include "fuse-adapter/init_flags_io.h"

#include <linux/fuse.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace bucketfs::fs {
namespace {

// Field offsets read with memcpy: the buffers carry no alignment promise.
constexpr size_t kInitInFlags2End = offsetof(fuse_init_in, flags2) + sizeof(uint32_t);
constexpr size_t kInitOutFlags2End = offsetof(fuse_init_out, flags2) + sizeof(uint32_t);
// fuse_init_out.max_stack_depth (7.40) follows flags2; older headers call it unused[0].
constexpr size_t kInitOutStackDepth = kInitOutFlags2End;

}  // namespace

void InitFlagsIo::SeeRequest(std::span<const std::byte> request) {
  fuse_in_header in{};
  if (request.size() < sizeof(in)) return;
  std::memcpy(&in, request.data(), sizeof(in));
  if (in.opcode != FUSE_INIT) return;
  const std::span<const std::byte> body = request.subspan(sizeof(in));
  uint32_t flags = 0;
  uint32_t flags2 = 0;
  if (body.size() < offsetof(fuse_init_in, flags) + sizeof(flags)) return;
  std::memcpy(&flags, body.data() + offsetof(fuse_init_in, flags), sizeof(flags));
  if ((flags & FUSE_INIT_EXT) && body.size() >= kInitInFlags2End) {
    std::memcpy(&flags2, body.data() + offsetof(fuse_init_in, flags2), sizeof(flags2));
  }
  if (record_init_) record_init_(request);
  offered_.store(flags | (uint64_t{flags2} << 32), std::memory_order_release);
  init_unique_.store(in.unique, std::memory_order_release);
  init_pending_.store(true, std::memory_order_release);
}

void InitFlagsIo::PatchReply(iovec* iov, int count) {
  if (!init_pending_.load(std::memory_order_acquire) || count < 1) return;
  fuse_out_header out{};
  if (iov[0].iov_len < sizeof(out)) return;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  if (out.unique != init_unique_.load(std::memory_order_acquire)) return;
  init_pending_.store(false, std::memory_order_release);
  // A kernel whose major is above 7 is answered with a bare version and asks
  // again: stay attentive until a full INIT reply went out.
  if (out.error != 0 || count < 2 || iov[1].iov_len < kInitOutFlags2End) return;
  init_done_.store(true, std::memory_order_release);
  uint64_t add = wanted_ & offered();
  // Passthrough needs a stack depth the reply can carry.
  if (iov[1].iov_len < kInitOutStackDepth + sizeof(uint32_t)) add &= ~kFusePassthrough;
  if (add == 0) return;
  auto* body = static_cast<std::byte*>(iov[1].iov_base);
  uint32_t flags = 0;
  uint32_t flags2 = 0;
  std::memcpy(&flags, body + offsetof(fuse_init_out, flags), sizeof(flags));
  std::memcpy(&flags2, body + offsetof(fuse_init_out, flags2), sizeof(flags2));
  flags |= static_cast<uint32_t>(add);
  if ((add >> 32) != 0) {
    flags |= FUSE_INIT_EXT;  // the kernel reads flags2 only with it
    flags2 |= static_cast<uint32_t>(add >> 32);
  }
  std::memcpy(body + offsetof(fuse_init_out, flags), &flags, sizeof(flags));
  std::memcpy(body + offsetof(fuse_init_out, flags2), &flags2, sizeof(flags2));
  if (add & kFusePassthrough) {
    std::memcpy(body + kInitOutStackDepth, &kPassthroughStackDepth, sizeof(uint32_t));
  }
  added_.store(add, std::memory_order_release);
}

void InitFlagsIo::ReplayInit(std::vector<std::byte> request) {
  MutexLock lock(replay_mu_);
  replay_ = std::move(request);
  replay_handed_out_ = false;
  replay_answered_ = false;
  replaying_.store(true, std::memory_order_release);
  resent_.store(false, std::memory_order_release);
}

bool InitFlagsIo::SwallowReplayReply(int fd, const iovec* iov, int count) {
  fuse_out_header out{};
  if (count < 1 || iov[0].iov_len < sizeof(out)) return false;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  fuse_in_header in{};
  {
    MutexLock lock(replay_mu_);
    if (replay_.size() < sizeof(in)) return false;
    std::memcpy(&in, replay_.data(), sizeof(in));
    if (out.unique != in.unique) return false;
    replay_answered_ = true;
  }
  init_pending_.store(false, std::memory_order_release);
  init_done_.store(true, std::memory_order_release);
  replaying_.store(false, std::memory_order_release);
  // The kernel has the previous daemon's answer already; now every request
  // that daemon had read and not answered comes back (Linux 6.9+).
  fuse_out_header resend{};
  resend.len = sizeof(resend);
  resend.error = kFuseNotifyResend;
  if (write(fd, &resend, sizeof(resend)) == static_cast<ssize_t>(sizeof(resend))) {
    resent_.store(true, std::memory_order_release);
    spdlog::info("asked the kernel to resend what the previous daemon had not answered");
  } else {
    // Before Linux 6.9: requests the previous daemon had read wait forever.
    spdlog::error(
        "the kernel refused FUSE_NOTIFY_RESEND ({}): requests in flight at the "
        "restart stay unanswered until the mount is aborted",
        strerror(errno));
  }
  replay_cv_.NotifyAll();
  return true;
}

ssize_t InitFlagsIo::Read(int fd, void* buf, size_t len) {
  if (replaying_.load(std::memory_order_acquire)) {
    MutexLock lock(replay_mu_);
    if (!replay_handed_out_ && !replay_.empty() && replay_.size() <= len) {
      replay_handed_out_ = true;
      std::memcpy(buf, replay_.data(), replay_.size());
      SeeRequest(replay_);
      return static_cast<ssize_t>(replay_.size());
    }
    // Nothing else may reach libfuse before its session has seen INIT.
    while (!replay_answered_) replay_cv_.Wait(replay_mu_);
  }
  const ssize_t n = read(fd, buf, len);
  if (n > 0 && !init_done_.load(std::memory_order_acquire)) {
    SeeRequest(std::span(static_cast<const std::byte*>(buf), static_cast<size_t>(n)));
  }
  return n;
}

ssize_t InitFlagsIo::Writev(int fd, iovec* iov, int count) {
  if (replaying_.load(std::memory_order_acquire) && SwallowReplayReply(fd, iov, count)) {
    ssize_t total = 0;
    for (int i = 0; i < count; ++i) total += static_cast<ssize_t>(iov[i].iov_len);
    return total;
  }
  if (!init_done_.load(std::memory_order_acquire)) PatchReply(iov, count);
  return writev(fd, iov, count);
}

}  // namespace bucketfs::fs
