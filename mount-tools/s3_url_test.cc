#include "mount-tools/s3_url.h"

#include <gtest/gtest.h>

namespace bucketfs::tools {
namespace {

TEST(ParseS3Url, BucketAndKey) {
  auto url = ParseS3Url("s3://my-bucket/dir/file name+1%#?.txt");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->bucket, "my-bucket");
  EXPECT_EQ(url->key, "dir/file name+1%#?.txt");
  EXPECT_EQ(url->ToString(), "s3://my-bucket/dir/file name+1%#?.txt");
}

TEST(ParseS3Url, BucketOnly) {
  auto a = ParseS3Url("s3://b");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bucket, "b");
  EXPECT_EQ(a->key, "");
  auto b = ParseS3Url("s3://b/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->key, "");
  EXPECT_EQ(b->ToString(), "s3://b");
}

TEST(ParseS3Url, KeepsSlashesInKey) {
  auto url = ParseS3Url("s3://b//a//b/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->key, "/a//b/");
}

TEST(ParseS3Url, Rejects) {
  for (const char* bad : {"", "s3:/b/k", "http://b/k", "s3://", "s3:///key", "b/k"}) {
    auto url = ParseS3Url(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_EQ(url.error().errno_value, EINVAL);
  }
}

TEST(FormatBytes, Units) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(1ull << 30), "1.0 GiB");
}

}  // namespace
}  // namespace bucketfs::tools
