#include "tests/s3sim/range.h"

#include <gtest/gtest.h>

namespace s3sim {
namespace {

using K = RangeResult::Kind;

void ExpectPartial(std::string_view h, uint64_t size, uint64_t first, uint64_t last) {
  RangeResult r = ParseRange(h, size);
  EXPECT_EQ(r.kind, K::kPartial) << h;
  EXPECT_EQ(r.first, first) << h;
  EXPECT_EQ(r.last, last) << h;
}

TEST(Range, ClosedOpenAndSuffixForms) {
  ExpectPartial("bytes=0-9", 100, 0, 9);
  ExpectPartial("bytes=10-", 100, 10, 99);
  ExpectPartial("bytes=-10", 100, 90, 99);
  ExpectPartial("bytes=-1000", 100, 0, 99);     // suffix longer than the object
  ExpectPartial("bytes=90-1000", 100, 90, 99);  // end clamped
  ExpectPartial("bytes=99-99", 100, 99, 99);
}

TEST(Range, UnsatisfiableRanges) {
  EXPECT_EQ(ParseRange("bytes=100-", 100).kind, K::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=100-200", 100).kind, K::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=-0", 100).kind, K::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=0-", 0).kind, K::kUnsatisfiable);
}

TEST(Range, InvalidHeadersServeTheWholeObject) {
  EXPECT_EQ(ParseRange("bytes=5-1", 100).kind, K::kWhole);
  EXPECT_EQ(ParseRange("items=0-1", 100).kind, K::kWhole);
  EXPECT_EQ(ParseRange("bytes=0-1,5-6", 100).kind, K::kWhole);
  EXPECT_EQ(ParseRange("bytes=a-b", 100).kind, K::kWhole);
  EXPECT_EQ(ParseRange("bytes=", 100).kind, K::kWhole);
}

}  // namespace
}  // namespace s3sim
