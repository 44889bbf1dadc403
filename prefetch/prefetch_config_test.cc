#include "prefetch/prefetch_config.h"

#include <gtest/gtest.h>

namespace bucketfs::prefetch {
namespace {

TEST(MountPrefetchConfigTest, PageCacheMountKeepsLateReadaheadReads) {
  MountReadSettings s;
  s.part_size = 4u << 20;
  s.budget_bytes = 1u << 30;
  const PrefetchConfig pc = MountPrefetchConfig(s);
  EXPECT_EQ(pc.part_size, 4u << 20);
  EXPECT_EQ(pc.budget_bytes, 1u << 30);
  EXPECT_EQ(pc.backward_tolerance, 4ull * kKernelReadahead);
  EXPECT_TRUE(pc.grow_only_when_reads_wait);
}

TEST(MountPrefetchConfigTest, DirectIoMountGrowsItsWindowAndKeepsLittleBehind) {
  MountReadSettings s;
  s.direct_io = true;
  const PrefetchConfig pc = MountPrefetchConfig(s);
  EXPECT_EQ(pc.backward_tolerance, 2 * pc.part_size);
  EXPECT_FALSE(pc.grow_only_when_reads_wait);
}

TEST(MountPrefetchConfigTest, GetsOnFuseThreadsLeaveTwoThreadsFree) {
  MountReadSettings s;
  s.fuse_threads = 6;
  s.gets_on_fuse_threads = 10;
  EXPECT_EQ(MountPrefetchConfig(s).max_fetches_on_caller, 4);
  s.fuse_threads = 1;
  EXPECT_EQ(MountPrefetchConfig(s).max_fetches_on_caller, 0);
  s.fuse_threads = 16;
  s.gets_on_fuse_threads = -3;
  EXPECT_EQ(MountPrefetchConfig(s).max_fetches_on_caller, 0);
}

}  // namespace
}  // namespace bucketfs::prefetch
