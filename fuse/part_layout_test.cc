// PartLayout: part boundaries for sizes that grow every 1000 parts.
#include "fuse/part_layout.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

TEST(PartLayoutTest, BoundariesFollowPartSizeFor) {
  PartLayout l(100);
  EXPECT_EQ(l.Start(0), 0u);
  EXPECT_EQ(l.End(0), 100u);
  EXPECT_EQ(l.IndexOf(99), 0);
  EXPECT_EQ(l.IndexOf(100), 1);
  EXPECT_EQ(l.Start(1000), 100000u);
  EXPECT_EQ(l.SizeOf(1000), 200u);
  EXPECT_EQ(l.IndexOf(100000), 1000);
  EXPECT_EQ(l.IndexOf(100199), 1000);
  EXPECT_EQ(l.IndexOf(100200), 1001);
  EXPECT_EQ(l.Count(0), 0);
  EXPECT_EQ(l.Count(1), 1);
  EXPECT_EQ(l.Count(100), 1);
  EXPECT_EQ(l.Count(101), 2);
  // 10,000 parts of 16 MiB growing reach past 5 TiB.
  PartLayout big(16ull << 20);
  EXPECT_LT(big.Count(5ull << 40), 10000);
}

}  // namespace
}  // namespace bucketfs::fs
