#include "mount-tools/order_command.h"

#include <gtest/gtest.h>

namespace bucketfs::tools {
namespace {

TEST(PercentDecodeTest, DecodesEscapes) {
  EXPECT_EQ(*PercentDecode("a%20b%25c"), "a b%c");
  EXPECT_EQ(*PercentDecode("plain/path.jpg"), "plain/path.jpg");
  EXPECT_EQ(*PercentDecode("%e2%82%AC"), "\xe2\x82\xac");
  EXPECT_EQ(*PercentDecode(""), "");
}

TEST(PercentDecodeTest, RefusesBrokenEscapes) {
  for (const char* bad : {"%", "a%2", "%zz", "%2g", "x%"}) {
    auto r = PercentDecode(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().errno_value, EINVAL);
    EXPECT_NE(r.error().message.find("%-escape"), std::string::npos);
  }
}

}  // namespace
}  // namespace bucketfs::tools
