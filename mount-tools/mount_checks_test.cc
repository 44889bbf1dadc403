#include "mount-tools/mount_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace bucketfs::tools {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;

class MockObjectClient : public s3::ObjectClient {
 public:
  MOCK_METHOD(Result<s3::HeadObjectResult>, HeadObject, (const s3::HeadObjectParams&), (override));
  MOCK_METHOD(Result<s3::GetObjectResult>, GetObject,
              (const s3::GetObjectParams&, std::span<std::byte>), (override));
  MOCK_METHOD(void, GetObjectAsync,
              (const s3::GetObjectParams&, std::span<std::byte>,
               std::function<void(Result<s3::GetObjectResult>)>),
              (override));
  MOCK_METHOD(Result<s3::PutObjectResult>, PutObject,
              (const s3::PutObjectParams&, std::span<const std::byte>), (override));
  MOCK_METHOD(Result<s3::CreateMultipartUploadResult>, CreateMultipartUpload,
              (const s3::CreateMultipartUploadParams&), (override));
  MOCK_METHOD(Result<s3::UploadPartResult>, UploadPart,
              (const s3::UploadPartParams&, std::span<const std::byte>), (override));
  MOCK_METHOD(void, UploadPartAsync,
              (const s3::UploadPartParams&, std::span<const std::byte>,
               std::function<void(Result<s3::UploadPartResult>)>),
              (override));
  MOCK_METHOD(Result<s3::UploadPartResult>, UploadPartCopy, (const s3::UploadPartCopyParams&),
              (override));
  MOCK_METHOD(Result<s3::CompleteMultipartUploadResult>, CompleteMultipartUpload,
              (const s3::CompleteMultipartUploadParams&), (override));
  MOCK_METHOD(Status, AbortMultipartUpload, (const s3::AbortMultipartUploadParams&), (override));
  MOCK_METHOD(Result<s3::ListMultipartUploadsResult>, ListMultipartUploads,
              (const s3::ListMultipartUploadsParams&), (override));
  MOCK_METHOD(Result<s3::ListObjectsV2Result>, ListObjectsV2, (const s3::ListObjectsV2Params&),
              (override));
  MOCK_METHOD(Result<s3::ListBucketsResult>, ListBuckets, (), (override));
  MOCK_METHOD(Status, DeleteObject, (const s3::DeleteObjectParams&), (override));
  MOCK_METHOD(Result<s3::DeleteObjectsResult>, DeleteObjects, (const s3::DeleteObjectsParams&),
              (override));
  MOCK_METHOD(Result<s3::CopyObjectResult>, CopyObject, (const s3::CopyObjectParams&), (override));
  MOCK_METHOD(Status, CreateBucket, (const s3::CreateBucketParams&), (override));
};

Error S3Error(int http, std::string code, int err) {
  Error e = MakeError(err, std::move(code), "server said no");
  e.http_status = http;
  e.request_id = "REQ1";
  return e;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/mount_checks_test.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CheckMountpointTest, EmptyDirectoryIsFine) {
  TempDir dir;
  EXPECT_TRUE(CheckMountpoint(dir.path(), false).ok());
}

TEST(CheckMountpointTest, Missing) {
  TempDir dir;
  Status s = CheckMountpoint(dir.path() + "/nope", false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, ENOENT);
  EXPECT_THAT(s.error().message, HasSubstr("create the directory"));
}

TEST(CheckMountpointTest, NotADirectory) {
  TempDir dir;
  std::ofstream(dir.path() + "/f") << "x";
  Status s = CheckMountpoint(dir.path() + "/f", false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, ENOTDIR);
}

TEST(CheckMountpointTest, NonEmptyNeedsOption) {
  TempDir dir;
  std::ofstream(dir.path() + "/f") << "x";
  Status s = CheckMountpoint(dir.path(), false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, ENOTEMPTY);
  EXPECT_THAT(s.error().message, HasSubstr("-o nonempty"));
  EXPECT_TRUE(CheckMountpoint(dir.path(), true).ok());
}

TEST(CheckMountpointTest, DevFdAccepted) { EXPECT_TRUE(CheckMountpoint("/dev/fd/3", false).ok()); }

TEST(MakePathsAbsoluteTest, RelativeBecomeAbsolute) {
  MountOptions o;
  o.fuse.mountpoint = "mnt/x";
  o.log.file = "log.txt";
  o.fs.cache_dir = "/abs/cache";
  o.client.ca_bundle = "ca.pem";
  MakePathsAbsolute(o);
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(o.fuse.mountpoint, cwd + "/mnt/x");
  EXPECT_EQ(o.log.file, cwd + "/log.txt");
  EXPECT_EQ(o.fs.cache_dir, "/abs/cache");
  EXPECT_EQ(*o.client.ca_bundle, cwd + "/ca.pem");
}

TEST(CheckBucketAccessTest, ListsOneKeyUnderThePrefix) {
  MockObjectClient client;
  fs::FsConfig config;
  config.bucket = "b";
  config.prefix = "p/";
  EXPECT_CALL(client, ListObjectsV2(_)).WillOnce([](const s3::ListObjectsV2Params& p) {
    EXPECT_EQ(p.bucket, "b");
    EXPECT_EQ(p.prefix, "p/");
    EXPECT_EQ(p.max_keys, 1);
    return Result<s3::ListObjectsV2Result>(s3::ListObjectsV2Result{});
  });
  EXPECT_TRUE(CheckBucketAccess(client, config).ok());
}

TEST(CheckBucketAccessTest, MissingBucket) {
  MockObjectClient client;
  fs::FsConfig config;
  config.bucket = "nobucket";
  EXPECT_CALL(client, ListObjectsV2(_)).WillOnce(Return(S3Error(404, "NoSuchBucket", ENOENT)));
  Status s = CheckBucketAccess(client, config);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "bucket 'nobucket' does not exist");
  EXPECT_EQ(s.error().code, "NoSuchBucket");
}

TEST(CheckBucketAccessTest, BadCredentials) {
  MockObjectClient client;
  fs::FsConfig config;
  config.bucket = "b";
  EXPECT_CALL(client, ListObjectsV2(_))
      .WillOnce(Return(S3Error(403, "SignatureDoesNotMatch", EACCES)));
  Status s = CheckBucketAccess(client, config);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("access to bucket 'b' was refused"));
  EXPECT_THAT(s.error().message, HasSubstr("SignatureDoesNotMatch"));
  EXPECT_THAT(s.error().message, HasSubstr("credentials"));
}

TEST(CheckBucketAccessTest, AllBucketsUsesListBuckets) {
  MockObjectClient client;
  fs::FsConfig config;
  EXPECT_CALL(client, ListBuckets()).WillOnce(Return(S3Error(403, "AccessDenied", EACCES)));
  Status s = CheckBucketAccess(client, config);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("the bucket list"));
}

TEST(DescribeBucketErrorTest, TransportFailure) {
  Error e = MakeError(EIO, "Transport", "Couldn't connect to server");
  EXPECT_THAT(DescribeBucketError("b", e), HasSubstr("cannot reach bucket 'b'"));
  EXPECT_THAT(DescribeBucketError("b", e), HasSubstr("Couldn't connect"));
}

}  // namespace
}  // namespace bucketfs::tools
