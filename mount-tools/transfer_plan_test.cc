#include "mount-tools/transfer_plan.h"

#include <gtest/gtest.h>

#include "s3/s3_limits.h"

namespace bucketfs::tools {
namespace {

TEST(SplitIntoParts, CoversExactly) {
  auto parts = SplitIntoParts(20, 8);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].offset, 0u);
  EXPECT_EQ(parts[0].length, 8u);
  EXPECT_EQ(parts[2].offset, 16u);
  EXPECT_EQ(parts[2].length, 4u);
  EXPECT_TRUE(SplitIntoParts(0, 8).empty());
  EXPECT_EQ(SplitIntoParts(16, 8).size(), 2u);
}

TEST(FitPartSize, KeepsWithinTenThousandParts) {
  EXPECT_EQ(FitPartSize(1ull << 30, 16 << 20), 16u << 20);
  uint64_t huge = 1ull << 40;  // 1 TiB at 16 MiB would be 65,536 parts
  uint64_t fitted = FitPartSize(huge, 16 << 20);
  EXPECT_LE((huge + fitted - 1) / fitted, static_cast<uint64_t>(s3::kMaxPartNumber));
  EXPECT_EQ(fitted % (1 << 20), 0u);
  EXPECT_GT(fitted, 16u << 20);
}

}  // namespace
}  // namespace bucketfs::tools
