#include "base/strings.h"

#include <gtest/gtest.h>

#include <string>

namespace bucketfs::base {
namespace {

TEST(TrimTest, RemovesWhitespaceAtBothEndsOnly) {
  EXPECT_EQ(Trim("  a b\t"), "a b");
  EXPECT_EQ(Trim("\r\n\v\f value \r\n"), "value");
  EXPECT_EQ(Trim("a"), "a");
  EXPECT_EQ(Trim("a \t b"), "a \t b");  // inner whitespace stays
}

TEST(TrimTest, AllWhitespaceOrEmptyGivesEmpty) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\r\n"), "");
  EXPECT_TRUE(Trim("   ").empty());
}

TEST(TrimTest, ReturnsAViewIntoTheInput) {
  const std::string text = "  key  ";
  const std::string_view t = Trim(text);
  EXPECT_EQ(t.data(), text.data() + 2);
  EXPECT_EQ(t.size(), 3u);
}

TEST(TrimTest, GivenCharactersOnly) {
  // HTTP's optional whitespace is space and tab: a CR or LF is kept.
  EXPECT_EQ(Trim(" \tv\r\n", kSpaceOrTab), "v\r\n");
  EXPECT_EQ(Trim("\n v \t", kSpaceOrTab), "\n v");
  EXPECT_EQ(Trim("xxaxx", "x"), "a");
  EXPECT_EQ(Trim(" \t ", kSpaceOrTab), "");
}

TEST(SplitTest, KeepsEmptyPiecesButNotAfterAFinalDelimiter) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(Split("a,,b,", ','), (V{"a", "", "b"}));
  EXPECT_EQ(Split("a,b", ','), (V{"a", "b"}));
  EXPECT_EQ(Split(",a", ','), (V{"", "a"}));
  EXPECT_EQ(Split("", ','), V{});
  EXPECT_EQ(Split(std::string_view("x\0y\0", 4), '\0'), (V{"x", "y"}));
}

}  // namespace
}  // namespace bucketfs::base

namespace bucketfs::base {
namespace {

TEST(IsUtf8Test, WellFormedTextPasses) {
  EXPECT_TRUE(IsUtf8(""));
  EXPECT_TRUE(IsUtf8("plain/ascii.txt"));
  EXPECT_TRUE(IsUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
}

TEST(IsUtf8Test, MalformedBytesFail) {
  EXPECT_FALSE(IsUtf8("\xff\xfe"));          // never in UTF-8
  EXPECT_FALSE(IsUtf8("a\xc3"));             // cut short
  EXPECT_FALSE(IsUtf8("\xc3("));             // bad continuation
  EXPECT_FALSE(IsUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST(HexTest, DigitsOfEitherCaseAndNothingElse) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  EXPECT_EQ(HexDigitValue('g'), -1);
  EXPECT_EQ(HexDigitValue('/'), -1);
  EXPECT_EQ(HexDigitValue(':'), -1);
}

TEST(HexTest, EncodesEveryByteAsTwoLowercaseDigits) {
  EXPECT_EQ(HexLower(std::string_view("\x00\x01\xab\xff", 4)), "0001abff");
  EXPECT_EQ(HexLower(""), "");
}

}  // namespace
}  // namespace bucketfs::base
