#include "fuse-adapter/init_flags_io.h"

#include <linux/fuse.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace bucketfs::fs {
namespace {

// Field offsets read with memcpy: the buffers carry no alignment promise.
constexpr size_t kInitInFlags2End = offsetof(fuse_init_in, flags2) + sizeof(uint32_t);
constexpr size_t kInitOutFlags2End = offsetof(fuse_init_out, flags2) + sizeof(uint32_t);

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
  const uint64_t add = wanted_ & offered();
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
  added_.store(add, std::memory_order_release);
}

ssize_t InitFlagsIo::Read(int fd, void* buf, size_t len) {
  const ssize_t n = read(fd, buf, len);
  if (n > 0 && !init_done_.load(std::memory_order_acquire)) {
    SeeRequest(std::span(static_cast<const std::byte*>(buf), static_cast<size_t>(n)));
  }
  return n;
}

ssize_t InitFlagsIo::Writev(int fd, iovec* iov, int count) {
  if (!init_done_.load(std::memory_order_acquire)) PatchReply(iov, count);
  return writev(fd, iov, count);
}

}  // namespace bucketfs::fs
