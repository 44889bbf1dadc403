#include "tests/s3sim/listing.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace s3sim {
namespace {

class ListingTest : public ::testing::Test {
 protected:
  void Add(std::initializer_list<const char*> keys) {
    for (const char* k : keys) objects_[k] = std::make_shared<Object>();
  }
  static std::vector<std::string> Keys(const ListPage& p) {
    std::vector<std::string> out;
    for (const auto& [k, o] : p.contents) out.push_back(k);
    return out;
  }
  std::map<std::string, ObjectPtr> objects_;
};

TEST_F(ListingTest, FlatListingWithPrefix) {
  Add({"a", "b/1", "b/2", "c"});
  ListParams p;
  p.prefix = "b/";
  ListPage page = ListKeys(objects_, p);
  EXPECT_EQ(Keys(page), (std::vector<std::string>{"b/1", "b/2"}));
  EXPECT_TRUE(page.common_prefixes.empty());
  EXPECT_FALSE(page.truncated);
}

TEST_F(ListingTest, DelimiterRollsUpPrefixesIncludingOnesHoldingOnlySubPrefixes) {
  Add({"d/1", "d/sub/x", "d/sub2/deep/y", "d/sub2/deep/z", "e", "f/g/h/i"});
  ListParams p;
  p.delimiter = "/";
  ListPage root = ListKeys(objects_, p);
  EXPECT_EQ(Keys(root), (std::vector<std::string>{"e"}));
  EXPECT_EQ(root.common_prefixes, (std::vector<std::string>{"d/", "f/"}));
  p.prefix = "d/";
  ListPage d = ListKeys(objects_, p);
  EXPECT_EQ(Keys(d), (std::vector<std::string>{"d/1"}));
  EXPECT_EQ(d.common_prefixes, (std::vector<std::string>{"d/sub/", "d/sub2/"}));
}

TEST_F(ListingTest, MultiCharacterDelimiter) {
  Add({"a--b--c", "a--d", "x"});
  ListParams p;
  p.delimiter = "--";
  ListPage page = ListKeys(objects_, p);
  EXPECT_EQ(page.common_prefixes, (std::vector<std::string>{"a--"}));
  EXPECT_EQ(Keys(page), (std::vector<std::string>{"x"}));
}

TEST_F(ListingTest, PagesResumeWhereTheyStoppedAndPrefixesCountOnce) {
  Add({"a/1", "a/2", "a/3", "b", "c/1", "c/2", "d"});
  ListParams p;
  p.delimiter = "/";
  p.max_keys = 2;
  std::vector<std::string> seen;
  for (int i = 0; i < 10; ++i) {
    ListPage page = ListKeys(objects_, p);
    EXPECT_LE(page.contents.size() + page.common_prefixes.size(), 2u);
    for (const auto& k : Keys(page)) seen.push_back(k);
    for (const auto& cp : page.common_prefixes) seen.push_back(cp);
    if (!page.truncated) break;
    p.resume_at = page.next_key;
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"a/", "b", "c/", "d"}));
}

TEST_F(ListingTest, StartAfterIsExclusiveAndContinuationWins) {
  Add({"k1", "k2", "k3"});
  ListParams p;
  p.start_after = "k1";
  EXPECT_EQ(Keys(ListKeys(objects_, p)), (std::vector<std::string>{"k2", "k3"}));
  p.resume_at = "k3";
  EXPECT_EQ(Keys(ListKeys(objects_, p)), (std::vector<std::string>{"k3"}));
}

TEST_F(ListingTest, StartAfterBeforePrefixStartsAtPrefix) {
  Add({"a", "p/1", "p/2", "z"});
  ListParams p;
  p.prefix = "p/";
  p.start_after = "a";
  EXPECT_EQ(Keys(ListKeys(objects_, p)), (std::vector<std::string>{"p/1", "p/2"}));
}

TEST_F(ListingTest, MaxKeysZeroAndExactFit) {
  Add({"a", "b"});
  ListParams p;
  p.max_keys = 0;
  ListPage none = ListKeys(objects_, p);
  EXPECT_TRUE(none.contents.empty());
  EXPECT_FALSE(none.truncated);
  p.max_keys = 2;
  EXPECT_FALSE(ListKeys(objects_, p).truncated);
  p.max_keys = 1;
  ListPage one = ListKeys(objects_, p);
  EXPECT_TRUE(one.truncated);
  EXPECT_EQ(one.next_key, "b");
}

TEST_F(ListingTest, BinaryOrderForUtf8) {
  Add({"\xc3\xa9", "z", "Z"});
  ListPage page = ListKeys(objects_, ListParams{});
  EXPECT_EQ(Keys(page), (std::vector<std::string>{"Z", "z", "\xc3\xa9"}));
}

TEST(PrefixSuccessor, IncrementsLastByteSkippingFF) {
  EXPECT_EQ(PrefixSuccessor("a/"), "a0");
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("\xff", 1)), "");
}

}  // namespace
}  // namespace s3sim
