// ObjectClientRangeSource over a recording ObjectClient: the ranged GET it
// sends (range, If-Match) and how it maps answers to a Status.
#include "prefetch/object_client_range_source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

namespace bucketfs::prefetch {
namespace {

Error NotUsed() { return MakeError(ENOSYS, "NotUsed", "not used by the range source"); }

// Only GetObjectAsync is real: it records the params and answers with `next`.
class RecordingClient : public s3::ObjectClient {
 public:
  std::vector<s3::GetObjectParams> gets;
  std::optional<Error> fail;

  void GetObjectAsync(const s3::GetObjectParams& p, std::span<std::byte> dest,
                      std::function<void(Result<s3::GetObjectResult>)> done) override {
    gets.push_back(p);
    if (fail) {
      done(*fail);
      return;
    }
    for (uint64_t i = 0; i < dest.size(); ++i) {
      dest[i] = std::byte(static_cast<uint8_t>(*p.offset + i));
    }
    s3::GetObjectResult r;
    r.bytes = dest.size();
    r.etag = p.if_match;
    done(r);
  }

  Result<s3::HeadObjectResult> HeadObject(const s3::HeadObjectParams&) override {
    return NotUsed();
  }
  Result<s3::GetObjectResult> GetObject(const s3::GetObjectParams&, std::span<std::byte>) override {
    return NotUsed();
  }
  Result<s3::PutObjectResult> PutObject(const s3::PutObjectParams&,
                                        std::span<const std::byte>) override {
    return NotUsed();
  }
  Result<s3::CreateMultipartUploadResult> CreateMultipartUpload(
      const s3::CreateMultipartUploadParams&) override {
    return NotUsed();
  }
  Result<s3::UploadPartResult> UploadPart(const s3::UploadPartParams&,
                                          std::span<const std::byte>) override {
    return NotUsed();
  }
  void UploadPartAsync(const s3::UploadPartParams&, std::span<const std::byte>,
                       std::function<void(Result<s3::UploadPartResult>)> done) override {
    done(NotUsed());
  }
  Result<s3::UploadPartResult> UploadPartCopy(const s3::UploadPartCopyParams&) override {
    return NotUsed();
  }
  Result<s3::CompleteMultipartUploadResult> CompleteMultipartUpload(
      const s3::CompleteMultipartUploadParams&) override {
    return NotUsed();
  }
  Status AbortMultipartUpload(const s3::AbortMultipartUploadParams&) override { return NotUsed(); }
  Result<s3::ListMultipartUploadsResult> ListMultipartUploads(
      const s3::ListMultipartUploadsParams&) override {
    return NotUsed();
  }
  Result<s3::ListObjectsV2Result> ListObjectsV2(const s3::ListObjectsV2Params&) override {
    return NotUsed();
  }
  Result<s3::ListBucketsResult> ListBuckets() override { return NotUsed(); }
  Status DeleteObject(const s3::DeleteObjectParams&) override { return NotUsed(); }
  Result<s3::DeleteObjectsResult> DeleteObjects(const s3::DeleteObjectsParams&) override {
    return NotUsed();
  }
  Result<s3::CopyObjectResult> CopyObject(const s3::CopyObjectParams&) override {
    return NotUsed();
  }
  Status CreateBucket(const s3::CreateBucketParams&) override { return NotUsed(); }
};

class ObjectClientRangeSourceTest : public ::testing::Test {
 protected:
  Status Fetch(uint64_t offset, std::span<std::byte> dest) {
    std::optional<Status> got;
    source_.FetchAsync(version_, offset, dest, [&got](Status s) { got = std::move(s); });
    EXPECT_TRUE(got.has_value());  // the recording client completes inline
    return got.value_or(MakeError(EIO, "NoCallback", ""));
  }

  std::shared_ptr<RecordingClient> client_ = std::make_shared<RecordingClient>();
  ObjectClientRangeSource source_{client_};
  ObjectVersion version_{"bkt", "dir/file.bin", "\"abc\"", 1 << 20};
};

TEST_F(ObjectClientRangeSourceTest, SendsARangedGetPinnedToTheEtag) {
  std::vector<std::byte> buf(4096);
  ASSERT_TRUE(Fetch(8192, buf).ok());
  ASSERT_EQ(client_->gets.size(), 1u);
  const auto& p = client_->gets[0];
  EXPECT_EQ(p.bucket, "bkt");
  EXPECT_EQ(p.key, "dir/file.bin");
  EXPECT_EQ(p.offset, 8192u);
  EXPECT_EQ(p.length, 4096u);
  EXPECT_EQ(p.if_match, "\"abc\"");
  EXPECT_EQ(buf[0], std::byte(static_cast<uint8_t>(8192)));
  EXPECT_EQ(buf[5], std::byte(static_cast<uint8_t>(8197)));
}

TEST_F(ObjectClientRangeSourceTest, ChangedObjectIsEio) {
  Error e = MakeError(ENOENT, "PreconditionFailed", "At least one of the preconditions failed");
  e.http_status = 412;
  client_->fail = e;
  std::vector<std::byte> buf(10);
  Status s = Fetch(0, buf);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EIO);
  EXPECT_EQ(s.error().code, "PreconditionFailed");
}

TEST_F(ObjectClientRangeSourceTest, OtherErrorsKeepTheirErrno) {
  client_->fail = MakeError(EACCES, "AccessDenied", "no");
  std::vector<std::byte> buf(10);
  Status s = Fetch(0, buf);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EACCES);
}

TEST_F(ObjectClientRangeSourceTest, EmptyRangeSendsNothing) {
  ASSERT_TRUE(Fetch(0, {}).ok());
  EXPECT_TRUE(client_->gets.empty());
}

}  // namespace
}  // namespace bucketfs::prefetch
