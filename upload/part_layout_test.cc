// PartLayout: part boundaries for sizes that grow every 1000 parts.
#include "upload/part_layout.h"

#include <gtest/gtest.h>

#include "s3/s3_limits.h"

namespace bucketfs::upload {
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
  // The most parts S3 allows, of 16 MiB growing, reach past its largest object.
  PartLayout big(16ull << 20);
  EXPECT_LT(big.Count(s3::kMaxObjectSize), s3::kMaxPartNumber);
}

TEST(PartSizeForTest, DoublesEveryThousandPartsUpToTheLargestPart) {
  EXPECT_EQ(PartSizeFor(16ull << 20, 1), 16ull << 20);
  EXPECT_EQ(PartSizeFor(16ull << 20, 1000), 16ull << 20);
  EXPECT_EQ(PartSizeFor(16ull << 20, 1001), 32ull << 20);
  EXPECT_EQ(PartSizeFor(16ull << 20, 2001), 64ull << 20);
  EXPECT_EQ(PartSizeFor(1ull << 30, 9000), s3::kMaxPartSize);
}

}  // namespace
}  // namespace bucketfs::upload
