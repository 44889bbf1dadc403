#include "s3/http_header_values.h"

#include <gtest/gtest.h>

namespace bucketfs::s3 {
namespace {

TEST(HttpHeaderValuesTest, ParseHeaderNumber) {
  EXPECT_EQ(ParseHeaderNumber("0"), 0u);
  EXPECT_EQ(ParseHeaderNumber(" 1234 "), 1234u);
  EXPECT_EQ(ParseHeaderNumber("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseHeaderNumber(""));
  EXPECT_FALSE(ParseHeaderNumber("-1"));
  EXPECT_FALSE(ParseHeaderNumber("12a"));
  EXPECT_FALSE(ParseHeaderNumber("18446744073709551616"));
}

TEST(HttpHeaderValuesTest, ParseContentRange) {
  auto r = ParseContentRange("bytes 10-19/100");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 10u);
  EXPECT_EQ(r->last, 19u);
  EXPECT_EQ(r->total, 100u);
  auto star = ParseContentRange("bytes 0-0/*");
  ASSERT_TRUE(star);
  EXPECT_FALSE(star->total);
  EXPECT_FALSE(ParseContentRange("bytes 10-9/100"));
  EXPECT_FALSE(ParseContentRange("bytes 10-19/15"));
  EXPECT_FALSE(ParseContentRange("bytes 10-19/19"));
  EXPECT_FALSE(ParseContentRange("items 0-1/2"));
  EXPECT_FALSE(ParseContentRange("bytes */100"));
  EXPECT_FALSE(ParseContentRange("bytes 0-/100"));
  EXPECT_FALSE(ParseContentRange("bytes 0-1"));
}

}  // namespace
}  // namespace bucketfs::s3
