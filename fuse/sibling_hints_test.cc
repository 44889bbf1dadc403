#include "fuse/sibling_hints.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

std::vector<ListedEntry> Entries() {
  std::vector<ListedEntry> v;
  v.push_back({"a", Kind::kFile, {1, {}, "\"ea\"", {}}});
  v.push_back({"d", Kind::kDir, {}});
  v.push_back({"b", Kind::kFile, {2, {}, "\"eb\"", {}}});
  v.push_back({"c", Kind::kFile, {3, {}, "\"ec\"", {}}});
  return v;
}

TEST(SiblingHintsTest, NextFilesSkipDirectories) {
  SiblingHints h;
  h.Remember(7, "bkt", "p/", Entries());
  auto next = h.After(7, "a", 5);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].key, "p/b");
  EXPECT_EQ(next[0].etag, "\"eb\"");
  EXPECT_EQ(next[0].size, 2u);
  EXPECT_EQ(next[1].key, "p/c");
  EXPECT_EQ(h.After(7, "a", 1).size(), 1u);
  EXPECT_TRUE(h.After(7, "c", 5).empty());
  EXPECT_TRUE(h.After(7, "zz", 5).empty());
  EXPECT_TRUE(h.After(8, "a", 5).empty());
}

TEST(SiblingHintsTest, BoundedNumberOfDirectories) {
  SiblingHints h(2);
  h.Remember(1, "b", "", Entries());
  h.Remember(2, "b", "", Entries());
  h.Remember(3, "b", "", Entries());
  EXPECT_TRUE(h.After(1, "a", 5).empty());
  EXPECT_EQ(h.After(3, "a", 5).size(), 2u);
}

TEST(SiblingHintsTest, HintsOnlyOpensThatFollowTheListingOrder) {
  SiblingHints h;
  std::vector<ListedEntry> entries;
  for (int i = 0; i < 100; ++i) entries.push_back({"f" + std::to_string(100 + i), Kind::kFile, {}});
  h.Remember(7, "b", "d/", entries);
  EXPECT_TRUE(h.AfterInOrder(7, "f100", 4).empty());  // a first open says nothing yet
  auto next = h.AfterInOrder(7, "f101", 4);           // in order: hinted
  ASSERT_EQ(next.size(), 4u);
  EXPECT_EQ(next[0].key, "d/f102");
  EXPECT_EQ(h.AfterInOrder(7, "f103", 4).size(), 4u);  // a skip within the window too
  // Shuffled opens far from every recent one: nothing.
  EXPECT_TRUE(h.AfterInOrder(7, "f170", 4).empty());
  EXPECT_TRUE(h.AfterInOrder(7, "f140", 4).empty());
  EXPECT_TRUE(h.AfterInOrder(7, "f120", 4).empty());
  EXPECT_TRUE(h.AfterInOrder(7, "f110", 4).empty());
}

}  // namespace
}  // namespace bucketfs::fs
