// Conformance: user metadata (x-amz-meta-*), which symbolic links and
// preserved attributes live in (s3fs's convention): set by PutObject and
// CreateMultipartUpload, returned by HeadObject, kept or replaced by
// CopyObject. See conformance_test.h.
#include "tests/conformance/conformance_test.h"

namespace bucketfs::conformance {
namespace {

TEST_P(ConformanceTest, PutObjectMetadataComesBackInHead) {
  const std::string body = "target/of/link";
  s3::PutObjectParams p;
  p.bucket = bucket();
  p.key = "meta/link";
  p.metadata = {{"mode", "41471"}, {"mtime", "1700000000"}};
  auto put = client().PutObject(p, std::as_bytes(std::span(body.data(), body.size())));
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  auto head = client().HeadObject({bucket(), "meta/link", "", ""});
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_EQ(head->metadata, (s3::UserMetadata{{"mode", "41471"}, {"mtime", "1700000000"}}));

  Put("meta/plain", RandomBytes(10, 1));
  auto plain = client().HeadObject({bucket(), "meta/plain", "", ""});
  ASSERT_TRUE(plain.ok()) << plain.error().ToString();
  EXPECT_TRUE(plain->metadata.empty());
}

TEST_P(ConformanceTest, CopyKeepsOrReplacesMetadata) {
  s3::PutObjectParams p;
  p.bucket = bucket();
  p.key = "meta/src";
  p.metadata = {{"mode", "33188"}};
  ASSERT_TRUE(client().PutObject(p, RandomBytes(100, 2)).ok());

  s3::CopyObjectParams kept;
  kept.bucket = bucket();
  kept.key = "meta/copy";
  kept.source_bucket = bucket();
  kept.source_key = "meta/src";
  ASSERT_TRUE(client().CopyObject(kept).ok());
  auto head = client().HeadObject({bucket(), "meta/copy", "", ""});
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_EQ(head->metadata, (s3::UserMetadata{{"mode", "33188"}}));

  // Onto itself with REPLACE: how chmod changes an object's metadata.
  s3::CopyObjectParams replaced = kept;
  replaced.key = "meta/src";
  replaced.replace_metadata = s3::UserMetadata{{"mode", "33261"}, {"uid", "1000"}};
  auto copy = client().CopyObject(replaced);
  ASSERT_TRUE(copy.ok()) << copy.error().ToString();
  head = client().HeadObject({bucket(), "meta/src", "", ""});
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_EQ(head->metadata, (s3::UserMetadata{{"mode", "33261"}, {"uid", "1000"}}));
  EXPECT_EQ(head->size, 100u);
}

TEST_P(ConformanceTest, MultipartUploadCarriesMetadata) {
  s3::CreateMultipartUploadParams p{bucket(), "meta/multi", "", s3::BodyChecksum::kMd5,
                                    s3::UserMetadata{{"mode", "33184"}}};
  auto up = client().CreateMultipartUpload(p);
  ASSERT_TRUE(up.ok()) << up.error().ToString();
  auto data = RandomBytes(1000, 3);
  s3::UploadPartParams part;
  part.bucket = bucket();
  part.key = "meta/multi";
  part.upload_id = up->upload_id;
  part.part_number = 1;
  auto r = client().UploadPart(part, data);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  auto done =
      client().CompleteMultipartUpload({bucket(), "meta/multi", up->upload_id, {{1, r->etag, ""}}});
  ASSERT_TRUE(done.ok()) << done.error().ToString();
  auto head = client().HeadObject({bucket(), "meta/multi", "", ""});
  ASSERT_TRUE(head.ok()) << head.error().ToString();
  EXPECT_EQ(head->metadata, (s3::UserMetadata{{"mode", "33184"}}));
}

}  // namespace
}  // namespace bucketfs::conformance
