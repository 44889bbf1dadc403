#include "fuse-adapter/init_flags_io.h"

#include <gtest/gtest.h>
#include <linux/fuse.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace bucketfs::fs {
namespace {

constexpr uint64_t kUnique = 2;

// An INIT request as the kernel sends it.
std::vector<std::byte> InitRequest(uint32_t flags, uint32_t flags2, uint64_t unique = kUnique) {
  fuse_in_header h{};
  fuse_init_in in{};
  h.len = sizeof(h) + sizeof(in);
  h.opcode = FUSE_INIT;
  h.unique = unique;
  in.major = 7;
  in.minor = 45;
  in.flags = flags;
  in.flags2 = flags2;
  std::vector<std::byte> b(sizeof(h) + sizeof(in));
  std::memcpy(b.data(), &h, sizeof(h));
  std::memcpy(b.data() + sizeof(h), &in, sizeof(in));
  return b;
}

// libfuse's reply: header and body in two iovecs.
struct Reply {
  fuse_out_header h{};
  fuse_init_out out{};
  iovec iov[2];
  explicit Reply(uint32_t flags, uint64_t unique = kUnique, int error = 0) {
    h.len = sizeof(h) + sizeof(out);
    h.unique = unique;
    h.error = error;
    out.major = 7;
    out.minor = 38;
    out.flags = flags;
    iov[0] = {&h, sizeof(h)};
    iov[1] = {&out, sizeof(out)};
  }
};

constexpr uint32_t kAllowMmapBit2 = static_cast<uint32_t>(kFuseDirectIoAllowMmap >> 32);

TEST(InitFlagsIo, AddsTheFlagTheKernelOffers) {
  InitFlagsIo io(kFuseDirectIoAllowMmap);
  io.SeeRequest(InitRequest(FUSE_INIT_EXT | FUSE_ASYNC_READ, kAllowMmapBit2 | 1));
  EXPECT_EQ(io.offered() & kFuseDirectIoAllowMmap, kFuseDirectIoAllowMmap);
  Reply r(FUSE_INIT_EXT | FUSE_ASYNC_READ);
  io.PatchReply(r.iov, 2);
  EXPECT_EQ(r.out.flags2, kAllowMmapBit2);  // only the wanted bit, not bit 32
  EXPECT_EQ(r.out.flags, FUSE_INIT_EXT | FUSE_ASYNC_READ);
  EXPECT_EQ(r.out.minor, 38u);
  EXPECT_EQ(io.added(), kFuseDirectIoAllowMmap);
}

TEST(InitFlagsIo, PassthroughCarriesAStackDepth) {
  constexpr uint32_t kBit2 = static_cast<uint32_t>(kFusePassthrough >> 32);
  InitFlagsIo io(kFusePassthrough | kFuseDirectIoAllowMmap);
  io.SeeRequest(InitRequest(FUSE_INIT_EXT, kBit2));
  Reply r(FUSE_INIT_EXT);
  io.PatchReply(r.iov, 2);
  EXPECT_EQ(r.out.flags2, kBit2);
  EXPECT_EQ(r.out.unused[0], kPassthroughStackDepth);  // max_stack_depth in 7.40
  EXPECT_EQ(io.added(), kFusePassthrough);

  InitFlagsIo without(kFusePassthrough);
  without.SeeRequest(InitRequest(FUSE_INIT_EXT, 0));  // a kernel without passthrough
  Reply r2(FUSE_INIT_EXT);
  without.PatchReply(r2.iov, 2);
  EXPECT_EQ(r2.out.flags2, 0u);
  EXPECT_EQ(r2.out.unused[0], 0u);
  EXPECT_EQ(without.added(), 0u);
}

TEST(InitFlagsIo, NothingWhenTheKernelDoesNotOfferIt) {
  InitFlagsIo io(kFuseDirectIoAllowMmap);
  io.SeeRequest(InitRequest(FUSE_INIT_EXT | FUSE_ASYNC_READ, 1));
  Reply r(FUSE_INIT_EXT);
  io.PatchReply(r.iov, 2);
  EXPECT_EQ(r.out.flags2, 0u);
  EXPECT_EQ(io.added(), 0u);
}

TEST(InitFlagsIo, Flags2IsIgnoredWithoutInitExt) {
  InitFlagsIo io(kFuseDirectIoAllowMmap);
  io.SeeRequest(InitRequest(FUSE_ASYNC_READ, kAllowMmapBit2));  // an old kernel's garbage
  Reply r(FUSE_ASYNC_READ);
  io.PatchReply(r.iov, 2);
  EXPECT_EQ(r.out.flags2, 0u);
  EXPECT_EQ(r.out.flags, FUSE_ASYNC_READ);
}

TEST(InitFlagsIo, OtherRepliesAndErrorsPassUnchanged) {
  InitFlagsIo io(kFuseDirectIoAllowMmap);
  io.SeeRequest(InitRequest(FUSE_INIT_EXT, kAllowMmapBit2));
  Reply other(FUSE_INIT_EXT, kUnique + 2);
  io.PatchReply(other.iov, 2);
  EXPECT_EQ(other.out.flags2, 0u);
  Reply failed(FUSE_INIT_EXT, kUnique, -EPROTO);
  io.PatchReply(failed.iov, 2);
  EXPECT_EQ(failed.out.flags2, 0u);
  EXPECT_EQ(io.added(), 0u);
}

TEST(InitFlagsIo, OtherRequestsAreNotInit) {
  InitFlagsIo io(kFuseDirectIoAllowMmap);
  auto req = InitRequest(FUSE_INIT_EXT, kAllowMmapBit2);
  fuse_in_header h{};
  std::memcpy(&h, req.data(), sizeof(h));
  h.opcode = FUSE_LOOKUP;
  std::memcpy(req.data(), &h, sizeof(h));
  io.SeeRequest(req);
  io.SeeRequest(std::span(req.data(), 10));  // short read: ignored
  EXPECT_EQ(io.offered(), 0u);
  Reply r(FUSE_INIT_EXT);
  io.PatchReply(r.iov, 2);
  EXPECT_EQ(r.out.flags2, 0u);
}

// Read and Writev move the bytes as read(2) and writev(2) do.
TEST(InitFlagsIo, ReadAndWritevThroughADescriptor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  InitFlagsIo io(kFuseDirectIoAllowMmap);
  const auto req = InitRequest(FUSE_INIT_EXT, kAllowMmapBit2);
  ASSERT_EQ(write(fds[1], req.data(), req.size()), static_cast<ssize_t>(req.size()));
  std::vector<std::byte> got(4096);
  ASSERT_EQ(io.Read(fds[0], got.data(), got.size()), static_cast<ssize_t>(req.size()));
  EXPECT_EQ(std::memcmp(got.data(), req.data(), req.size()), 0);
  Reply r(FUSE_INIT_EXT);
  ASSERT_EQ(io.Writev(fds[1], r.iov, 2), static_cast<ssize_t>(sizeof(r.h) + sizeof(r.out)));
  fuse_init_out sent{};
  ASSERT_EQ(read(fds[0], got.data(), got.size()),
            static_cast<ssize_t>(sizeof(r.h) + sizeof(r.out)));
  std::memcpy(&sent, got.data() + sizeof(fuse_out_header), sizeof(sent));
  EXPECT_EQ(sent.flags2, kAllowMmapBit2);
  // After INIT, requests are no longer looked at.
  const auto again = InitRequest(FUSE_INIT_EXT, 0, 9);
  ASSERT_EQ(write(fds[1], again.data(), again.size()), static_cast<ssize_t>(again.size()));
  ASSERT_GT(io.Read(fds[0], got.data(), got.size()), 0);
  EXPECT_EQ(io.offered() & kFuseDirectIoAllowMmap, kFuseDirectIoAllowMmap);
  close(fds[0]);
  close(fds[1]);
}

TEST(InitFlagsIo, ReplayedInitIsAnsweredInsideThenTheKernelIsAskedToResend) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  const int device = fds[0];  // what the session reads and writes
  const int kernel = fds[1];  // what the kernel would see
  InitFlagsIo io(kFuseParallelDirops);
  const auto init = InitRequest(FUSE_INIT_EXT, 0, /*unique=*/42);
  io.ReplayInit(init);
  EXPECT_FALSE(io.resent());
  std::vector<std::byte> buf(4096);
  ASSERT_EQ(io.Read(device, buf.data(), buf.size()), static_cast<ssize_t>(init.size()));
  EXPECT_EQ(std::memcmp(buf.data(), init.data(), init.size()), 0);
  // Another worker's read waits until INIT was answered, then reads the device.
  const auto next = InitRequest(0, 0, /*unique=*/44);
  ASSERT_EQ(write(kernel, next.data(), next.size()), static_cast<ssize_t>(next.size()));
  std::atomic<ssize_t> second{-2};
  std::thread worker([&] {
    std::vector<std::byte> b(4096);
    second = io.Read(device, b.data(), b.size());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(second.load(), -2) << "a request reached libfuse before its INIT";
  fuse_out_header out{};
  out.unique = 42;
  fuse_init_out body{};
  out.len = sizeof(out) + sizeof(body);
  iovec iov[2] = {{&out, sizeof(out)}, {&body, sizeof(body)}};
  EXPECT_EQ(io.Writev(device, iov, 2), static_cast<ssize_t>(out.len));
  worker.join();
  EXPECT_EQ(second.load(), static_cast<ssize_t>(next.size()));
  EXPECT_TRUE(io.resent());
  // The kernel received no INIT reply, only the resend notification.
  fuse_out_header got{};
  ASSERT_EQ(read(kernel, &got, sizeof(got)), static_cast<ssize_t>(sizeof(got)));
  EXPECT_EQ(got.unique, 0u);
  EXPECT_EQ(got.error, kFuseNotifyResend);
  EXPECT_EQ(got.len, sizeof(got));
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace bucketfs::fs
