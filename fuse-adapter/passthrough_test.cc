#include "fuse-adapter/passthrough.h"

#include <gtest/gtest.h>

#include <vector>

namespace bucketfs::fs {
namespace {

// The uapi values (include/uapi/linux/fuse.h, 7.40).
static_assert(kFuseDevIocBackingOpen == 0x4010e501, "FUSE_DEV_IOC_BACKING_OPEN");
static_assert(kFuseDevIocBackingClose == 0x4004e502, "FUSE_DEV_IOC_BACKING_CLOSE");
static_assert(sizeof(FuseBackingMap) == 16, "struct fuse_backing_map");
static_assert(offsetof(FuseOpenOut, backing_id) == 12, "fuse_open_out.backing_id");

struct FakeKernel {
  std::vector<int> opened_fds;
  std::vector<int32_t> closed;
  bool refuse = false;
  int32_t next_id = 1;
  BackingOps Ops() {
    return BackingOps{
        .open = [this](int fd) -> Result<int32_t> {
          if (refuse) return MakeError(EPERM, "BackingOpen", "not permitted");
          opened_fds.push_back(fd);
          return next_id++;
        },
        .close = [this](int32_t id) { closed.push_back(id); },
    };
  }
};

std::shared_ptr<void> Copy() { return std::make_shared<int>(0); }

TEST(PassthroughTable, AVerifiedCopyOpensPassthroughAndTheLastReleaseClosesIt) {
  FakeKernel k;
  PassthroughTable t(k.Ops());
  auto copy = Copy();
  std::weak_ptr<void> pinned = copy;
  EXPECT_EQ(t.OnOpen(5, 100, copy, 42), std::optional<int32_t>(1));
  copy.reset();
  EXPECT_FALSE(pinned.expired());  // the table pins the copy while it is open
  // A second open of the same inode shares the backing file, copy or not.
  EXPECT_EQ(t.OnOpen(5, 101, nullptr, -1), std::optional<int32_t>(1));
  EXPECT_EQ(k.opened_fds, std::vector<int>{42});
  t.OnRelease(100);
  EXPECT_TRUE(k.closed.empty());
  t.OnRelease(101);
  EXPECT_EQ(k.closed, std::vector<int32_t>{1});
  EXPECT_TRUE(pinned.expired());
  EXPECT_EQ(t.inodes(), 0u);
  EXPECT_EQ(t.passthrough_opens(), 2u);
}

TEST(PassthroughTable, AnInodeWithServedOpensStaysServed) {
  FakeKernel k;
  PassthroughTable t(k.Ops());
  EXPECT_EQ(t.OnOpen(5, 100, nullptr, -1), std::nullopt);  // not cached (or a writer)
  EXPECT_EQ(t.OnOpen(5, 101, Copy(), 42), std::nullopt);   // the kernel would refuse a mix
  EXPECT_TRUE(k.opened_fds.empty());
  t.OnRelease(100);
  t.OnRelease(101);
  EXPECT_EQ(t.OnOpen(5, 102, Copy(), 42), std::optional<int32_t>(1));  // now it may
  t.OnRelease(102);
  EXPECT_EQ(k.closed, std::vector<int32_t>{1});
}

TEST(PassthroughTable, ARefusalFallsBackToServedReads) {
  FakeKernel k;
  k.refuse = true;  // no CAP_SYS_ADMIN, or a backing file the kernel will not stack
  PassthroughTable t(k.Ops());
  EXPECT_EQ(t.OnOpen(5, 100, Copy(), 42), std::nullopt);
  EXPECT_EQ(t.refusals(), 1u);
  k.refuse = false;
  EXPECT_EQ(t.OnOpen(6, 101, Copy(), 43), std::optional<int32_t>(1));  // other inodes still may
  t.OnRelease(100);
  t.OnRelease(101);
  t.OnRelease(999);  // unknown handles are ignored
  EXPECT_EQ(k.closed, std::vector<int32_t>{1});
  EXPECT_EQ(t.inodes(), 0u);
}

}  // namespace
}  // namespace bucketfs::fs
