#include "prefetch/read_coverage.h"

#include <gtest/gtest.h>

namespace bucketfs::prefetch {
namespace {

constexpr uint64_t kPage = ReadCoverage::kPage;

TEST(ReadCoverageTest, CompleteOnceEveryPageWasReadInAnyOrder) {
  ReadCoverage c(8 * kPage);
  EXPECT_FALSE(c.Add(4 * kPage, 8 * kPage));
  EXPECT_FALSE(c.Add(0, 2 * kPage));
  EXPECT_FALSE(c.Add(0, 2 * kPage));  // read twice: counted once
  EXPECT_TRUE(c.Add(2 * kPage, 4 * kPage));
  EXPECT_TRUE(c.complete());
}

TEST(ReadCoverageTest, PartialPagesDoNotCount) {
  ReadCoverage c(2 * kPage);
  EXPECT_FALSE(c.Add(0, kPage - 1));
  EXPECT_FALSE(c.Add(kPage - 1, 2 * kPage - 1));  // page 1 is not whole
  EXPECT_FALSE(c.Add(1, kPage));                  // page 0 is not whole
  EXPECT_TRUE(c.Add(0, 2 * kPage));
}

TEST(ReadCoverageTest, ShortLastPageAndReadsPastTheEnd) {
  ReadCoverage c(kPage + 100);
  EXPECT_FALSE(c.Add(0, kPage));
  EXPECT_TRUE(c.Add(kPage, kPage + 4096));  // clamped to the part's end
  ReadCoverage tiny(10);
  EXPECT_FALSE(tiny.Add(5, 5));  // empty read
  EXPECT_TRUE(tiny.Add(0, 1 << 20));
}

}  // namespace
}  // namespace bucketfs::prefetch
