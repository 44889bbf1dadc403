// Conformance: multipart uploads (complete, abort, list uploads, part copy).
#include <condition_variable>
#include <mutex>

#include "tests/conformance/conformance_test.h"

namespace bucketfs::conformance {
namespace {

std::vector<std::byte> Slice(const std::vector<std::byte>& v, size_t off, size_t len) {
  return {v.begin() + static_cast<long>(off), v.begin() + static_cast<long>(off + len)};
}

TEST_P(ConformanceTest, MultipartUploadRoundTrip) {
  const size_t part = backend().min_part_size;
  auto data = RandomBytes(2 * part + 777, 10);
  auto created = client().CreateMultipartUpload({bucket(), "multi/object", ""});
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  std::vector<s3::CompletedPart> parts;
  for (int n = 1; n <= 3; ++n) {
    size_t off = static_cast<size_t>(n - 1) * part;
    size_t len = std::min(part, data.size() - off);
    s3::UploadPartParams up;
    up.bucket = bucket();
    up.key = "multi/object";
    up.upload_id = created->upload_id;
    up.part_number = n;
    auto r = client().UploadPart(up, Slice(data, off, len));
    ASSERT_TRUE(r.ok()) << "part " << n << ": " << r.error().ToString();
    EXPECT_EQ(r->etag, QuotedMd5(Slice(data, off, len)));
    parts.push_back({n, r->etag});
  }
  s3::CompleteMultipartUploadParams fin{bucket(), "multi/object", created->upload_id, parts};
  auto done = client().CompleteMultipartUpload(fin);
  ASSERT_TRUE(done.ok()) << done.error().ToString();
  // S3's multipart ETag: MD5 of the part MD5s, then "-<parts>".
  if (backend().multipart_etag_suffix) {
    EXPECT_EQ(done->etag.substr(done->etag.size() - 3), "-3\"") << done->etag;
  }
  auto got = Get("multi/object");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(got->size(), data.size());
  EXPECT_TRUE(*got == data);
}

// What a bucketfs mount sends by default: an upload created for CRC32C,
// every part with x-amz-checksum-crc32c, Complete repeating them.
TEST_P(ConformanceTest, Crc32cMultipartUploadRoundTrip) {
  const size_t part = backend().min_part_size;
  auto data = RandomBytes(part + 123, 12);  // a full part and a short last one
  s3::CreateMultipartUploadParams cp{bucket(), "multi/crc32c", ""};
  cp.checksum = s3::BodyChecksum::kCrc32c;
  auto created = client().CreateMultipartUpload(cp);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  std::vector<s3::CompletedPart> parts;
  for (int n = 1; n <= 2; ++n) {
    const size_t off = static_cast<size_t>(n - 1) * part;
    const size_t len = std::min(part, data.size() - off);
    s3::UploadPartParams up{bucket(), "multi/crc32c", created->upload_id, n,
                            s3::BodyChecksum::kCrc32c};
    auto r = client().UploadPart(up, Slice(data, off, len));
    ASSERT_TRUE(r.ok()) << "part " << n << ": " << r.error().ToString();
    EXPECT_FALSE(r->checksum_crc32c.empty());
    parts.push_back({n, r->etag, r->checksum_crc32c});
  }
  auto done =
      client().CompleteMultipartUpload({bucket(), "multi/crc32c", created->upload_id, parts});
  ASSERT_TRUE(done.ok()) << done.error().ToString();
  auto got = Get("multi/crc32c");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_TRUE(*got == data);

  s3::PutObjectParams put{bucket(), "single/crc32c", "", s3::BodyChecksum::kCrc32c, ""};
  ASSERT_TRUE(client().PutObject(put, Slice(data, 0, 1000)).ok());
  auto single = Get("single/crc32c");
  ASSERT_TRUE(single.ok()) << single.error().ToString();
  EXPECT_TRUE(*single == Slice(data, 0, 1000));
}

TEST_P(ConformanceTest, AsyncPartsOutOfOrder) {
  const size_t part = backend().min_part_size;
  auto data = RandomBytes(3 * part, 11);
  auto created = client().CreateMultipartUpload({bucket(), "async-multi", ""});
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  std::mutex mu;
  std::condition_variable cv;
  int pending = 3;
  std::vector<s3::CompletedPart> parts(3);
  std::string error;
  for (int n = 3; n >= 1; --n) {  // last part first
    s3::UploadPartParams up{bucket(), "async-multi", created->upload_id, n, s3::BodyChecksum::kMd5};
    std::span<const std::byte> body(data.data() + static_cast<size_t>(n - 1) * part, part);
    client().UploadPartAsync(up, body, [&, n](Result<s3::UploadPartResult> r) {
      std::lock_guard<std::mutex> lock(mu);
      if (r.ok()) {
        parts[n - 1] = {n, r->etag};
      } else {
        error = r.error().ToString();
      }
      if (--pending == 0) cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return pending == 0; });
  }
  ASSERT_TRUE(error.empty()) << error;
  auto done =
      client().CompleteMultipartUpload({bucket(), "async-multi", created->upload_id, parts});
  ASSERT_TRUE(done.ok()) << done.error().ToString();
  auto got = Get("async-multi");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_TRUE(*got == data);
}

TEST_P(ConformanceTest, AbortAndListMultipartUploads) {
  if (!backend().list_multipart_uploads) {
    GTEST_SKIP() << backend().kind
                 << " has no ListMultipartUploads (501) nor AbortMultipartUpload (405)";
  }
  auto one = client().CreateMultipartUpload({bucket(), "up/one", ""});
  auto two = client().CreateMultipartUpload({bucket(), "up/two", ""});
  ASSERT_TRUE(one.ok()) << one.error().ToString();
  ASSERT_TRUE(two.ok()) << two.error().ToString();
  auto part = RandomBytes(1000, 12);
  auto up =
      client().UploadPart({bucket(), "up/one", one->upload_id, 1, s3::BodyChecksum::kMd5}, part);
  ASSERT_TRUE(up.ok()) << up.error().ToString();

  s3::ListMultipartUploadsParams lp;
  lp.bucket = bucket();
  lp.prefix = "up/";
  auto listed = client().ListMultipartUploads(lp);
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  std::vector<std::pair<std::string, std::string>> seen;
  for (const auto& u : listed->uploads) seen.emplace_back(u.key, u.upload_id);
  std::vector<std::pair<std::string, std::string>> want = {{"up/one", one->upload_id},
                                                           {"up/two", two->upload_id}};
  EXPECT_EQ(seen, want);

  Status aborted = client().AbortMultipartUpload({bucket(), "up/one", one->upload_id});
  ASSERT_TRUE(aborted.ok()) << aborted.error().ToString();
  listed = client().ListMultipartUploads(lp);
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed->uploads.size(), 1u);
  EXPECT_EQ(listed->uploads[0].key, "up/two");
  // Nothing became visible, and the aborted upload is gone.
  auto head = client().HeadObject({bucket(), "up/one", "", ""});
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.error().errno_value, ENOENT);
  auto late =
      client().UploadPart({bucket(), "up/one", one->upload_id, 2, s3::BodyChecksum::kMd5}, part);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, "NoSuchUpload") << late.error().ToString();
  EXPECT_TRUE(client().AbortMultipartUpload({bucket(), "up/two", two->upload_id}).ok());
}

TEST_P(ConformanceTest, UploadPartCopy) {
  if (!backend().upload_part_copy) GTEST_SKIP() << backend().kind << " has no UploadPartCopy";
  const size_t part = backend().min_part_size;
  auto src = RandomBytes(3 * part, 13);
  Put("copy-src", src);
  auto created = client().CreateMultipartUpload({bucket(), "copy-dst", ""});
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  s3::UploadPartCopyParams cp;
  cp.bucket = bucket();
  cp.key = "copy-dst";
  cp.upload_id = created->upload_id;
  cp.part_number = 1;
  cp.source_bucket = bucket();
  cp.source_key = "copy-src";
  cp.source_offset = part;  // the middle third
  cp.source_length = part;
  auto copied = client().UploadPartCopy(cp);
  ASSERT_TRUE(copied.ok()) << copied.error().ToString();
  auto tail = RandomBytes(100, 14);
  auto up = client().UploadPart(
      {bucket(), "copy-dst", created->upload_id, 2, s3::BodyChecksum::kMd5}, tail);
  ASSERT_TRUE(up.ok()) << up.error().ToString();
  auto done = client().CompleteMultipartUpload(
      {bucket(), "copy-dst", created->upload_id, {{1, copied->etag}, {2, up->etag}}});
  ASSERT_TRUE(done.ok()) << done.error().ToString();
  auto got = Get("copy-dst");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  std::vector<std::byte> want = Slice(src, part, part);
  want.insert(want.end(), tail.begin(), tail.end());
  EXPECT_TRUE(*got == want);
}

}  // namespace
}  // namespace bucketfs::conformance
