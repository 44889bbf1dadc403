#include "fuse/subtree_lister.h"

#include <gtest/gtest.h>

#include <map>

#include "s3/testing/fake_object_client.h"

namespace bucketfs::fs {
namespace {

class SubtreeListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_.CreateBucketNamed("b");
    client_.Put("b", "p/a-file", "x");  // a file of the parent: not listed into any subtree
    for (int d = 0; d < 20; ++d) {
      const std::string dir = "p/d" + std::string(d < 10 ? "0" : "") + std::to_string(d) + "/";
      dirs_.push_back(dir);
      client_.Put("b", dir, "");  // a directory marker
      for (int f = 0; f < 7; ++f) client_.Put("b", dir + "f" + std::to_string(f), "xy");
      client_.Put("b", dir + "deep/er/leaf", "z");
      client_.Put("b", dir + "x", "same name as a directory");
      client_.Put("b", dir + "x/y", "hidden by the file x");
    }
  }
  // What a delimiter listing of `dir` (readdir's way) gives, as "name/" or "name:size".
  std::vector<std::string> Delimited(const std::string& dir) {
    DirListing l(dir);
    s3::ListObjectsV2Params p;
    p.bucket = "b";
    p.prefix = dir;
    p.delimiter = "/";
    auto r = client_.ListObjectsV2(p);
    EXPECT_TRUE(r.ok());
    l.AddPage(*r, std::chrono::steady_clock::now());
    return Names(l.entries());
  }
  static std::vector<std::string> Names(const std::vector<ListedEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) {
      out.push_back(e.kind == Kind::kDir ? e.name + "/"
                                         : e.name + ":" + std::to_string(e.attrs.size));
    }
    return out;
  }

  s3::testing::FakeObjectClient client_;
  std::vector<std::string> dirs_;
};

TEST_F(SubtreeListerTest, AFlatRangeGivesEveryDirectoryBelowAsADelimiterListingWould) {
  std::map<std::string, std::vector<ListedEntry>> got;
  const int before = client_.Calls("ListObjectsV2");
  auto left = ListSubtrees(
      client_, SubtreeRange{"b", "p/", dirs_, ""}, /*page_size=*/1000, /*max_pages=*/4,
      [&](CompleteListings done) {
        for (auto& [k, v] : done) got[k] = std::move(v);
      },
      [] { return false; });
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(client_.Calls("ListObjectsV2") - before, 1);  // 220 keys: one page
  for (const auto& d : dirs_) {
    for (const std::string& sub : {d, d + "deep/", d + "deep/er/", d + "x/"}) {
      ASSERT_TRUE(got.count(sub)) << sub;
      EXPECT_EQ(Names(got[sub]), Delimited(sub)) << sub;
    }
  }
  EXPECT_EQ(got.count("p/"), 0u);  // the parent is not the range's to list
}

TEST_F(SubtreeListerTest, RangesStopAtTheNextRangeAndAtThePageCap) {
  // The middle range d05..d09 ends where d10 begins.
  std::vector<std::string> middle(dirs_.begin() + 5, dirs_.begin() + 10);
  std::map<std::string, std::vector<ListedEntry>> got;
  auto sink = [&](CompleteListings done) {
    for (auto& [k, v] : done) got[k] = std::move(v);
  };
  auto left = ListSubtrees(client_, SubtreeRange{"b", "p/", middle, dirs_[10]}, 1000, 4, sink,
                           [] { return false; });
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(got.count(dirs_[4]), 0u);
  EXPECT_EQ(got.count(dirs_[10]), 0u);
  EXPECT_EQ(got.count(dirs_[9]), 1u);

  // Pages of 5 keys, at most 3 pages: the first directory (11 keys) is
  // complete after page 3, the others are handed back.
  got.clear();
  left = ListSubtrees(client_, SubtreeRange{"b", "p/", middle, dirs_[10]}, 5, 3, sink,
                      [] { return false; });
  ASSERT_TRUE(got.count(dirs_[5]));
  EXPECT_EQ(Names(got[dirs_[5]]), Delimited(dirs_[5]));
  EXPECT_EQ(left, std::vector<std::string>(middle.begin() + 1, middle.end()));
}

TEST_F(SubtreeListerTest, AFailedRequestHandsEverythingBack) {
  client_.FailNext("ListObjectsV2", EIO);
  int sunk = 0;
  auto left = ListSubtrees(
      client_, SubtreeRange{"b", "p/", dirs_, ""}, 1000, 4, [&](CompleteListings) { ++sunk; },
      [] { return false; });
  EXPECT_EQ(left, dirs_);
  EXPECT_EQ(sunk, 0);
}

}  // namespace
}  // namespace bucketfs::fs
