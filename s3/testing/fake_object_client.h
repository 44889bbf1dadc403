// FakeObjectClient: an in-memory S3 for the unit tests of the layers above s3/
// (the filesystem core, write-back).
// Strict where the core relies on S3 (If-Match, listing order and paging with
// delimiter, multipart part order, and an upload created with CRC32C: every
// part's sum in CompleteMultipartUpload), counting every call, and able to
// fail the next call of a given operation with a chosen errno.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "s3/object_client.h"

namespace bucketfs::s3::testing {

class FakeObjectClient : public s3::ObjectClient {
 public:
  struct Object {
    std::string data;
    std::string etag;
    s3::Timestamp mtime;
    s3::UserMetadata metadata;
  };

  // Test setup and inspection.
  void CreateBucketNamed(const std::string& bucket);
  void Put(const std::string& bucket, const std::string& key, const std::string& data);
  // An object with user metadata, as another client (s3fs) would write it.
  void PutWithMetadata(const std::string& bucket, const std::string& key, const std::string& data,
                       const s3::UserMetadata& metadata);
  s3::UserMetadata Metadata(const std::string& bucket, const std::string& key) const;
  bool Exists(const std::string& bucket, const std::string& key) const;
  std::string Data(const std::string& bucket, const std::string& key) const;
  std::vector<std::string> Keys(const std::string& bucket) const;
  int Calls(const std::string& op) const;  // "HeadObject", "ListObjectsV2", ...
  size_t OpenUploads() const;
  // The next call of `op` fails with `errno_value`.
  void FailNext(const std::string& op, int errno_value);
  // UploadPartCopy into an upload created with CRC32C reports the part's sum,
  // as S3 does; false: like a server that reports none.
  void SetCopyReportsCrc32c(bool on);
  // The checksum each CreateMultipartUpload asked for, in call order.
  std::vector<s3::BodyChecksum> UploadChecksums() const;
  // Calls of `op` ("HeadObject", "ListObjectsV2" or "PutObject") wait, before they are
  // counted, until Release(op): a request that has not answered yet.
  void Hold(const std::string& op);
  void Release(const std::string& op);
  // Calls of `op` waiting in Hold now.
  int Waiting(const std::string& op);

  Result<s3::HeadObjectResult> HeadObject(const s3::HeadObjectParams& p) override;
  Result<s3::GetObjectResult> GetObject(const s3::GetObjectParams& p,
                                        std::span<std::byte> dest) override;
  void GetObjectAsync(const s3::GetObjectParams& p, std::span<std::byte> dest,
                      std::function<void(Result<s3::GetObjectResult>)> done) override;
  Result<s3::PutObjectResult> PutObject(const s3::PutObjectParams& p,
                                        std::span<const std::byte> body) override;
  Result<s3::CreateMultipartUploadResult> CreateMultipartUpload(
      const s3::CreateMultipartUploadParams& p) override;
  Result<s3::UploadPartResult> UploadPart(const s3::UploadPartParams& p,
                                          std::span<const std::byte> body) override;
  void UploadPartAsync(const s3::UploadPartParams& p, std::span<const std::byte> body,
                       std::function<void(Result<s3::UploadPartResult>)> done) override;
  Result<s3::UploadPartResult> UploadPartCopy(const s3::UploadPartCopyParams& p) override;
  Result<s3::CompleteMultipartUploadResult> CompleteMultipartUpload(
      const s3::CompleteMultipartUploadParams& p) override;
  Status AbortMultipartUpload(const s3::AbortMultipartUploadParams& p) override;
  Result<s3::ListMultipartUploadsResult> ListMultipartUploads(
      const s3::ListMultipartUploadsParams& p) override;
  Result<s3::ListObjectsV2Result> ListObjectsV2(const s3::ListObjectsV2Params& p) override;
  Result<s3::ListBucketsResult> ListBuckets() override;
  Status DeleteObject(const s3::DeleteObjectParams& p) override;
  Result<s3::DeleteObjectsResult> DeleteObjects(const s3::DeleteObjectsParams& p) override;
  Result<s3::CopyObjectResult> CopyObject(const s3::CopyObjectParams& p) override;
  Status CreateBucket(const s3::CreateBucketParams& p) override;

 private:
  struct Upload {
    std::string bucket, key;
    s3::BodyChecksum checksum = s3::BodyChecksum::kMd5;
    std::map<int, std::string> parts;  // number -> data
    s3::UserMetadata metadata;
  };
  using Bucket = std::map<std::string, Object>;

  void WaitWhileHeld(const std::string& op) EXCLUDES(hold_mu_, mu_);
  // Counts the call; returns an injected failure if one is armed.
  std::optional<Error> Enter(const std::string& op) REQUIRES(mu_);
  Result<Bucket*> FindBucket(const std::string& bucket) REQUIRES(mu_);
  Object& Store(Bucket& b, const std::string& key, std::string data) REQUIRES(mu_);

  Mutex hold_mu_;  // never held with mu_
  CondVar hold_cv_;
  std::set<std::string> held_ GUARDED_BY(hold_mu_);
  std::map<std::string, int> waiting_ GUARDED_BY(hold_mu_);
  mutable Mutex mu_;
  std::map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
  std::map<std::string, Upload> uploads_ GUARDED_BY(mu_);
  std::map<std::string, int> calls_ GUARDED_BY(mu_);
  std::map<std::string, int> fail_next_ GUARDED_BY(mu_);
  int next_etag_ GUARDED_BY(mu_) = 1;
  int next_upload_ GUARDED_BY(mu_) = 1;
  bool copy_reports_crc32c_ GUARDED_BY(mu_) = true;
  std::vector<s3::BodyChecksum> upload_checksums_ GUARDED_BY(mu_);
};

}  // namespace bucketfs::s3::testing
