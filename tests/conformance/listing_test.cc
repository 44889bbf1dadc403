// Conformance: ListObjectsV2 (paging, start-after, delimiter), ListBuckets.
#include <algorithm>

#include "tests/conformance/conformance_test.h"

namespace bucketfs::conformance {
namespace {

TEST_P(ConformanceTest, ListObjectsV2PagesWithContinuationTokens) {
  const std::vector<std::string> keys = {"p/k1", "p/k2", "p/k3", "p/k4", "p/k5"};
  for (const auto& k : keys) Put(k, RandomBytes(k.size(), 20));
  Put("q/other", RandomBytes(3, 21));
  s3::ListObjectsV2Params p;
  p.bucket = bucket();
  p.prefix = "p/";
  p.max_keys = 2;
  std::vector<std::string> seen;
  std::vector<size_t> page_sizes;
  for (int page = 0; page < 10; ++page) {
    auto r = client().ListObjectsV2(p);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    page_sizes.push_back(r->objects.size());
    for (const auto& o : r->objects) {
      seen.push_back(o.key);
      EXPECT_EQ(o.size, o.key.size());
    }
    if (!r->is_truncated) break;
    ASSERT_FALSE(r->next_continuation_token.empty());
    p.continuation_token = r->next_continuation_token;
  }
  EXPECT_EQ(seen, keys);
  EXPECT_EQ(page_sizes, (std::vector<size_t>{2, 2, 1}));
}

TEST_P(ConformanceTest, ListObjectsV2StartAfter) {
  for (const char* k : {"a", "b", "c", "d", "e"}) Put(k, RandomBytes(1, 22));
  s3::ListObjectsV2Params p;
  p.bucket = bucket();
  p.start_after = "b";
  auto r = client().ListObjectsV2(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  std::vector<std::string> seen;
  for (const auto& o : r->objects) seen.push_back(o.key);
  EXPECT_EQ(seen, (std::vector<std::string>{"c", "d", "e"}));
}

TEST_P(ConformanceTest, ListObjectsV2DelimiterAndCommonPrefixes) {
  for (const char* k : {"top.txt", "dir/a", "dir/b", "dir2/x", "zz"}) Put(k, RandomBytes(1, 23));
  s3::ListObjectsV2Params p;
  p.bucket = bucket();
  p.delimiter = "/";
  auto r = client().ListObjectsV2(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  std::vector<std::string> objects;
  for (const auto& o : r->objects) objects.push_back(o.key);
  EXPECT_EQ(objects, (std::vector<std::string>{"top.txt", "zz"}));
  EXPECT_EQ(r->common_prefixes, (std::vector<std::string>{"dir/", "dir2/"}));

  p.prefix = "dir/";
  r = client().ListObjectsV2(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  objects.clear();
  for (const auto& o : r->objects) objects.push_back(o.key);
  EXPECT_EQ(objects, (std::vector<std::string>{"dir/a", "dir/b"}));
  EXPECT_TRUE(r->common_prefixes.empty());
}

TEST_P(ConformanceTest, DelimiterPagingCountsPrefixesAsKeys) {
  for (const char* k : {"a/1", "b/1", "c", "d/1", "e"}) Put(k, RandomBytes(1, 24));
  s3::ListObjectsV2Params p;
  p.bucket = bucket();
  p.delimiter = "/";
  p.max_keys = 2;
  std::vector<std::string> entries;
  for (int page = 0; page < 10; ++page) {
    auto r = client().ListObjectsV2(p);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    for (const auto& o : r->objects) entries.push_back(o.key);
    for (const auto& cp : r->common_prefixes) entries.push_back(cp);
    if (!r->is_truncated) break;
    p.continuation_token = r->next_continuation_token;
  }
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"a/", "b/", "c", "d/", "e"}));
}

TEST_P(ConformanceTest, PrefixHoldingOnlySubPrefixes) {
  if (!backend().subprefix_only_prefixes) {
    GTEST_SKIP() << backend().kind << " drops prefixes that hold only sub-prefixes";
  }
  Put("deep/er/file", RandomBytes(1, 25));
  s3::ListObjectsV2Params p;
  p.bucket = bucket();
  p.delimiter = "/";
  auto r = client().ListObjectsV2(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->objects.empty());
  EXPECT_EQ(r->common_prefixes, std::vector<std::string>{"deep/"});
}

TEST_P(ConformanceTest, ListBucketsIncludesOwnBucket) {
  auto r = client().ListBuckets();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  bool found = false;
  for (const auto& b : r->buckets) found = found || b.name == bucket();
  EXPECT_TRUE(found) << bucket();
}

}  // namespace
}  // namespace bucketfs::conformance
