// Conformance: single objects (put/get/head, ranges, delete, copy, errors,
// awkward key names). See conformance_test.h.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "tests/conformance/conformance_test.h"

namespace bucketfs::conformance {
namespace {

TEST_P(ConformanceTest, PutHeadGetRoundTripWithChecksum) {
  auto data = RandomBytes(1 << 20, 1);
  s3::PutObjectParams p;
  p.bucket = bucket();
  p.key = "dir/object.bin";
  auto put = client().PutObject(p, data);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(put->etag, QuotedMd5(data));

  auto head = client().HeadObject({bucket(), "dir/object.bin", "", ""});
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_EQ(head->size, data.size());
  EXPECT_EQ(head->etag, put->etag);

  auto got = Get("dir/object.bin");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(QuotedMd5(*got), QuotedMd5(data));
  EXPECT_TRUE(*got == data);
}

TEST_P(ConformanceTest, EmptyObject) {
  Put("empty", {});
  auto head = client().HeadObject({bucket(), "empty", "", ""});
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_EQ(head->size, 0u);
  auto got = Get("empty");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_TRUE(got->empty());
}

TEST_P(ConformanceTest, RangedGets) {
  auto data = RandomBytes(300000, 2);
  Put("ranged", data);
  struct Range {
    uint64_t offset, length;
  };
  if (backend().one_byte_range_at_zero) {
    std::vector<std::byte> one(1);
    s3::GetObjectParams p;
    p.bucket = bucket();
    p.key = "ranged";
    p.offset = 0;
    p.length = 1;
    auto got = client().GetObject(p, one);
    ASSERT_TRUE(got.ok()) << got.error().ToString();
    EXPECT_EQ(one[0], data[0]);
  }
  for (Range r : {Range{1, 1}, Range{0, 1000}, Range{12345, 6789}, Range{299999, 1},
                  Range{200000, 100000}, Range{0, 300000}}) {
    std::vector<std::byte> buf(r.length);
    s3::GetObjectParams p;
    p.bucket = bucket();
    p.key = "ranged";
    p.offset = r.offset;
    p.length = r.length;
    auto got = client().GetObject(p, buf);
    ASSERT_TRUE(got.ok()) << r.offset << "+" << r.length << ": " << got.error().ToString();
    EXPECT_EQ(got->bytes, r.length);
    EXPECT_EQ(got->object_size, data.size());
    EXPECT_TRUE(std::equal(buf.begin(), buf.end(), data.begin() + static_cast<long>(r.offset)))
        << r.offset << "+" << r.length;
  }
}

TEST_P(ConformanceTest, ParallelAsyncRangedGetsReassemble) {
  const size_t kPart = 64 << 10;
  auto data = RandomBytes(16 * kPart + 123, 3);
  Put("async", data);
  std::vector<std::byte> out(data.size());
  std::mutex mu;
  std::condition_variable cv;
  int pending = 0;
  std::vector<std::string> errors;
  for (size_t off = 0; off < data.size(); off += kPart) {
    size_t len = std::min(kPart, data.size() - off);
    s3::GetObjectParams p;
    p.bucket = bucket();
    p.key = "async";
    p.offset = off;
    p.length = len;
    {
      std::lock_guard<std::mutex> lock(mu);
      ++pending;
    }
    client().GetObjectAsync(p, std::span<std::byte>(out.data() + off, len),
                            [&](Result<s3::GetObjectResult> r) {
                              std::lock_guard<std::mutex> lock(mu);
                              if (!r.ok()) errors.push_back(r.error().ToString());
                              if (--pending == 0) cv.notify_all();
                            });
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return pending == 0; });
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_TRUE(out == data);
}

TEST_P(ConformanceTest, IfMatchMismatchFailsGet) {
  if (!backend().conditional_get) GTEST_SKIP() << backend().kind << " ignores If-Match on GET";
  auto data = RandomBytes(1000, 4);
  Put("versioned", data);
  std::vector<std::byte> buf(data.size());
  s3::GetObjectParams p;
  p.bucket = bucket();
  p.key = "versioned";
  p.if_match = "\"0123456789abcdef0123456789abcdef\"";
  auto got = client().GetObject(p, buf);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().http_status, 412) << got.error().ToString();
  // The right ETag passes.
  p.if_match = QuotedMd5(data);
  auto ok = client().GetObject(p, buf);
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_TRUE(buf == data);
}

TEST_P(ConformanceTest, NoSuchKeyIsEnoent) {
  std::vector<std::byte> buf(10);
  s3::GetObjectParams p;
  p.bucket = bucket();
  p.key = "missing";
  auto got = client().GetObject(p, buf);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().errno_value, ENOENT) << got.error().ToString();
  EXPECT_EQ(got.error().code, "NoSuchKey");
  EXPECT_EQ(got.error().http_status, 404);
  auto head = client().HeadObject({bucket(), "missing", "", ""});
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.error().errno_value, ENOENT) << head.error().ToString();
}

TEST_P(ConformanceTest, NoSuchBucketIsEnoent) {
  s3::ListObjectsV2Params p;
  p.bucket = bucket() + "-missing";
  auto list = client().ListObjectsV2(p);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().code, "NoSuchBucket") << list.error().ToString();
  EXPECT_EQ(list.error().errno_value, ENOENT);
  std::vector<std::byte> buf(1);
  s3::GetObjectParams g;
  g.bucket = bucket() + "-missing";
  g.key = "k";
  auto got = client().GetObject(g, buf);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().errno_value, ENOENT) << got.error().ToString();
}

TEST_P(ConformanceTest, BadCredentialsAreEacces) {
  if (!backend().checks_signatures) GTEST_SKIP() << backend().kind << " accepts any signature";
  auto bad = server().MakeClient("not-the-secret");
  ASSERT_TRUE(bad.ok()) << bad.error().ToString();
  auto head = (*bad)->HeadObject({bucket(), "anything", "", ""});
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.error().errno_value, EACCES) << head.error().ToString();
  s3::ListObjectsV2Params p;
  p.bucket = bucket();
  auto list = (*bad)->ListObjectsV2(p);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().errno_value, EACCES) << list.error().ToString();
  EXPECT_EQ(list.error().code, "SignatureDoesNotMatch");
}

TEST_P(ConformanceTest, DeleteObject) {
  Put("doomed", RandomBytes(10, 5));
  ASSERT_TRUE(client().DeleteObject({bucket(), "doomed"}).ok());
  auto head = client().HeadObject({bucket(), "doomed", "", ""});
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.error().errno_value, ENOENT);
  // S3 deletes are idempotent: a missing key is not an error.
  Status again = client().DeleteObject({bucket(), "doomed"});
  EXPECT_TRUE(again.ok()) << again.error().ToString();
}

TEST_P(ConformanceTest, DeleteObjects) {
  for (const char* k : {"a", "b", "c", "d e"}) Put(k, RandomBytes(10, 6));
  s3::DeleteObjectsParams p;
  p.bucket = bucket();
  p.keys = {"a", "c", "d e"};
  p.quiet = false;
  auto r = client().DeleteObjects(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->failed.empty());
  EXPECT_EQ(ListAll(""), std::vector<std::string>{"b"});
}

TEST_P(ConformanceTest, CopyObject) {
  auto data = RandomBytes(70000, 7);
  Put("src/one", data);
  s3::CopyObjectParams p;
  p.bucket = bucket();
  p.key = "dst/two";
  p.source_bucket = bucket();
  p.source_key = "src/one";
  auto r = client().CopyObject(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  auto got = Get("dst/two");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_TRUE(*got == data);
}

TEST_P(ConformanceTest, AwkwardKeyNamesRoundTrip) {
  const std::vector<std::string> keys = {
      "with space",        "two  spaces/and trailing ",
      "plus+sign",         "percent%20literal",
      "percent%",          "question?mark=1&b=2",
      "hash#fragment",     "unicode-\xc3\xa9t\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac",
      "tilde~star*",       "semi;colon,comma'quote",
      "mix a+b%c?d#e/f g", "brackets[]{}()",
      "dollar$at@bang!",   "equals=sign"};
  uint64_t seed = 100;
  for (const auto& key : keys) {
    auto data = RandomBytes(100 + seed, seed);
    ++seed;
    Put(key, data);
    auto got = Get(key);
    ASSERT_TRUE(got.ok()) << "'" << key << "': " << got.error().ToString();
    EXPECT_TRUE(*got == data) << "'" << key << "'";
    // Listing returns the key byte for byte (other keys may share the prefix).
    auto listed = ListAll(key);
    EXPECT_NE(std::find(listed.begin(), listed.end(), key), listed.end()) << "'" << key << "'";
  }
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(ListAll(""), sorted);
}

TEST_P(ConformanceTest, LongKeysRoundTrip) {
  if (!backend().long_keys) GTEST_SKIP() << backend().kind << " cannot store 255+ byte keys";
  for (size_t len : {255u, 1024u}) {
    std::string key;
    while (key.size() < len)
      key += key.size() % 50 == 49 ? '/' : static_cast<char>('a' + key.size() % 26);
    key.resize(len);
    auto data = RandomBytes(len, len);
    Put(key, data);
    auto got = Get(key);
    ASSERT_TRUE(got.ok()) << len << ": " << got.error().ToString();
    EXPECT_TRUE(*got == data);
    EXPECT_EQ(ListAll(key), std::vector<std::string>{key});
  }
}

TEST_P(ConformanceTest, OverlongKeyIsRejectedCleanly) {
  if (!backend().long_keys) GTEST_SKIP() << backend().kind << " cannot store 255+ byte keys";
  std::string key(1025, 'k');
  s3::PutObjectParams p;
  p.bucket = bucket();
  p.key = key;
  auto data = RandomBytes(10, 8);
  auto r = client().PutObject(p, data);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "KeyTooLongError") << r.error().ToString();
}

}  // namespace
}  // namespace bucketfs::conformance
