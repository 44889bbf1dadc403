#include "tests/s3sim/util.h"

#include <gtest/gtest.h>

#include "tests/s3sim/preload.h"

namespace s3sim {
namespace {

TEST(Util, UriEncodeFollowsAwsRules) {
  EXPECT_EQ(UriEncode("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(UriEncode("a b/c+d=e"), "a%20b%2Fc%2Bd%3De");
  EXPECT_EQ(UriEncode("a b/c", false), "a%20b/c");
  EXPECT_EQ(UriEncode("\xc3\xa9"), "%C3%A9");
  EXPECT_EQ(*UriDecode("a%20b%2fc+"), "a b/c+");
  EXPECT_FALSE(UriDecode("%4").has_value());
}

TEST(Util, Base64RoundTrip) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\x00\xff\x10"}) {
    EXPECT_EQ(*Unbase64(Base64(s)), s);
  }
  EXPECT_EQ(Base64("hello"), "aGVsbG8=");
  EXPECT_FALSE(Unbase64("a").has_value());
  EXPECT_FALSE(Unbase64("a*==").has_value());
}

TEST(Util, Dates) {
  EXPECT_EQ(*ParseAmzDate("20130524T000000Z"), 1369353600);
  EXPECT_FALSE(ParseAmzDate("2013-05-24T00:00:00Z").has_value());
  EXPECT_EQ(HttpDate(1369353600), "Fri, 24 May 2013 00:00:00 GMT");
  EXPECT_EQ(IsoDate(1369353600), "2013-05-24T00:00:00.000Z");
}

TEST(Util, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));
}

TEST(Preload, SpecsAndSizes) {
  EXPECT_EQ(*ParseSize("1G"), 1ULL << 30);
  EXPECT_EQ(*ParseSize("8MiB"), 8ULL << 20);
  EXPECT_EQ(*ParseSize("123"), 123u);
  EXPECT_FALSE(ParseSize("1X").has_value());
  auto spec = ParsePreloadSpec("bench/data/:8:1073741824");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->bucket, "bench");
  EXPECT_EQ(spec->prefix, "data/");
  EXPECT_EQ(spec->count, 8u);
  EXPECT_EQ(PreloadKey(*spec, 3), "data/obj-00003");
  EXPECT_FALSE(ParsePreloadSpec("bench:8").has_value());
}

TEST(Preload, BytesAreDeterministicAndIndependentOfThreads) {
  std::string a(1000003, '\0'), b(1000003, '\0'), c(1000003, '\0');
  FillPreloadBytes(7, "bench", "k", a.data(), a.size(), 1);
  FillPreloadBytes(7, "bench", "k", b.data(), b.size(), 3);
  FillPreloadBytes(8, "bench", "k", c.data(), c.size(), 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a.substr(0, 64), a.substr(64, 64));
}

}  // namespace
}  // namespace s3sim
