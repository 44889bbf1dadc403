#include "prefetch/consumed_ranges.h"

#include <gtest/gtest.h>

namespace bucketfs::prefetch::internal {
namespace {

TEST(ConsumedRangesTest, EmptyOverlapsNothing) {
  ConsumedRanges r;
  EXPECT_FALSE(r.Overlaps(0, 100));
}

TEST(ConsumedRangesTest, OverlapNeedsASharedByte) {
  ConsumedRanges r;
  r.Add(10, 20);
  EXPECT_TRUE(r.Overlaps(15, 16));
  EXPECT_TRUE(r.Overlaps(0, 11));
  EXPECT_TRUE(r.Overlaps(19, 30));
  EXPECT_FALSE(r.Overlaps(0, 10));
  EXPECT_FALSE(r.Overlaps(20, 30));
}

TEST(ConsumedRangesTest, TouchingAndOverlappingRangesMerge) {
  ConsumedRanges r;
  r.Add(0, 10);
  r.Add(20, 30);
  r.Add(10, 20);  // joins both
  EXPECT_TRUE(r.Overlaps(9, 21));
  r.Add(40, 50);
  r.Add(25, 45);  // overlaps the merged range and the last one
  EXPECT_TRUE(r.Overlaps(30, 40));
  EXPECT_FALSE(r.Overlaps(50, 60));
}

}  // namespace
}  // namespace bucketfs::prefetch::internal
