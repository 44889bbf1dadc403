#include "mount-tools/byte_size.h"

#include <gtest/gtest.h>

namespace bucketfs::tools {
namespace {

TEST(ParseByteSize, AcceptsUnitsAndSuffixes) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("12B"), 12u);
  EXPECT_EQ(*ParseByteSize("4k"), 4096u);
  EXPECT_EQ(*ParseByteSize("4K"), 4096u);
  EXPECT_EQ(*ParseByteSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseByteSize("8m"), 8u << 20);
  EXPECT_EQ(*ParseByteSize("8MB"), 8u << 20);
  EXPECT_EQ(*ParseByteSize("8MiB"), 8u << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1ull << 30);
  EXPECT_EQ(*ParseByteSize("2T"), 2ull << 40);
  EXPECT_EQ(*ParseByteSize("16777215T"), 16777215ull << 40);
}

TEST(ParseByteSize, RefusesJunkWithEinval) {
  for (const char* bad : {"", "M", "-1", " 8M", "8M ", "8X", "8Mb", "8mib", "8MiBB", "8BB", "8b",
                          "8MM", "5Bx", "1.5G", "0x10", "99999999999999999999", "16777216T"}) {
    auto r = ParseByteSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().errno_value, EINVAL) << bad;
    EXPECT_NE(r.error().ToString().find(bad), std::string::npos) << r.error().ToString();
  }
}

}  // namespace
}  // namespace bucketfs::tools
