#include "fuse/dir_listing.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

s3::ListObjectsV2Result Page(std::vector<std::string> keys, std::vector<std::string> prefixes,
                             bool truncated) {
  s3::ListObjectsV2Result r;
  for (auto& k : keys) r.objects.push_back({k, 1, {}, "\"e\"", ""});
  r.common_prefixes = std::move(prefixes);
  r.is_truncated = truncated;
  return r;
}

std::vector<std::string> Names(const DirListing& l) {
  std::vector<std::string> out;
  for (const auto& e : l.entries()) out.push_back(e.name + (e.kind == Kind::kDir ? "/" : ""));
  return out;
}

TEST(DirListingTest, SkipsOddNames) {
  DirListing l("p/");
  std::string long_name(256, 'x');
  l.AddPage(Page({"p/", "p/ok", "p/" + long_name, "p/" + std::string(255, 'y')},
                 {"p//", "p/./", "p/../", "p/d/"}, false),
            std::chrono::steady_clock::now());
  EXPECT_EQ(Names(l), (std::vector<std::string>{"d/", "ok", std::string(255, 'y')}));
}

TEST(DirListingTest, FileHidesDirectoryOfSameNameAcrossPages) {
  DirListing l("");
  // "x" ends page 1; "x!" and the prefix "x/" come on page 2.
  l.AddPage(Page({"a", "x"}, {}, true), std::chrono::steady_clock::now());
  EXPECT_EQ(Names(l), (std::vector<std::string>{"a", "x"}));  // certain at once
  l.AddPage(Page({"x!"}, {"x/"}, false), std::chrono::steady_clock::now());
  EXPECT_EQ(Names(l), (std::vector<std::string>{"a", "x", "x!"}));
  EXPECT_EQ(l.entries()[1].kind, Kind::kFile);
}

TEST(DirListingTest, LocalEntriesDoNotDuplicate) {
  DirListing l("");
  l.AddPage(Page({"a"}, {"d/"}, false), std::chrono::steady_clock::now());
  l.AddLocal({"d", Kind::kDir, {}});
  l.AddLocal({"new", Kind::kDir, {}});
  l.AddLocal({"a", Kind::kFile, {}});
  EXPECT_EQ(Names(l), (std::vector<std::string>{"a", "d/", "new/"}));
}

}  // namespace
}  // namespace bucketfs::fs
