// S3ObjectClient: the ObjectClient over an S3Executor. Each operation builds
// one S3Request (method, bucket, key, query, headers, body), runs it through
// the executor (which signs, sends and retries) and turns the answer into the
// typed result: XML bodies through s3_xml_responses, headers through the
// helpers below. Split by operation group:
//   object_client_data.cc      HeadObject, GetObject(+Async), PutObject,
//                              UploadPart(+Async)  (the data path)
//   object_client_multipart.cc Create/Complete/Abort/ListMultipartUploads,
//                              UploadPartCopy
//   object_client_meta.cc      listings, deletes, CopyObject, CreateBucket
//
// Retry choices (S3Request::idempotent; the executor retries only idempotent
// requests, except when the connection never reached the server):
//  - GET/HEAD/PUT/UploadPart/UploadPartCopy/CopyObject/DELETE: idempotent
//    (repeating them yields the same state).
//  - DeleteObjects: idempotent (deleting a deleted key succeeds).
//  - CreateMultipartUpload: idempotent. A retry after a lost answer leaves
//    an orphan upload that costs storage until aborted (ListMultipartUploads
//    or a lifecycle rule cleans it); failing the write instead costs more.
//  - CompleteMultipartUpload: retried like the others (AWS asks clients to
//    retry it on 500), and also on an <Error> inside HTTP 200 whose code is
//    retryable (by this class, on the caller's thread). Once the upload
//    completed, a repeat answers NoSuchUpload; that answer counts as success
//    only when the key holds the object these parts make, recognised by its
//    multipart ETag (s3/multipart_etag.h), and stays an error otherwise.
//  - CopyObject/UploadPartCopy answers with <Error> inside HTTP 200 are
//    retried the same way.
//
// ETags: PutObject returns the ETag header as sent, possibly empty (callers
// that need one ask HeadObject). UploadPart and UploadPartCopy REQUIRE an
// ETag (CompleteMultipartUpload cannot name the part without it): a missing
// or empty one is the error "MissingETag" (EIO).
//
// GetObject bounds: bytes stream from the transport straight into the
// caller's span through a sink that refuses to write past it; a ranged GET
// succeeds only with exactly `length` bytes of the requested range, a
// whole-object GET only when the object fits `dest` and every byte announced
// arrived.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "s3/http_transport.h"
#include "s3/object_client.h"
#include "s3/s3_executor.h"

namespace bucketfs::s3 {

class S3ObjectClient final : public ObjectClient {
 public:
  // REQUIRES: `executor` outlives this client.
  explicit S3ObjectClient(S3Executor& executor) : executor_(executor) {}

  Result<HeadObjectResult> HeadObject(const HeadObjectParams& p) override;
  Result<GetObjectResult> GetObject(const GetObjectParams& p, std::span<std::byte> dest) override;
  void GetObjectAsync(const GetObjectParams& p, std::span<std::byte> dest,
                      std::function<void(Result<GetObjectResult>)> done) override;
  Result<PutObjectResult> PutObject(const PutObjectParams& p,
                                    std::span<const std::byte> body) override;

  Result<CreateMultipartUploadResult> CreateMultipartUpload(
      const CreateMultipartUploadParams& p) override;
  Result<UploadPartResult> UploadPart(const UploadPartParams& p,
                                      std::span<const std::byte> body) override;
  void UploadPartAsync(const UploadPartParams& p, std::span<const std::byte> body,
                       std::function<void(Result<UploadPartResult>)> done) override;
  Result<UploadPartResult> UploadPartCopy(const UploadPartCopyParams& p) override;
  Result<CompleteMultipartUploadResult> CompleteMultipartUpload(
      const CompleteMultipartUploadParams& p) override;
  Status AbortMultipartUpload(const AbortMultipartUploadParams& p) override;
  Result<ListMultipartUploadsResult> ListMultipartUploads(
      const ListMultipartUploadsParams& p) override;

  Result<ListObjectsV2Result> ListObjectsV2(const ListObjectsV2Params& p) override;
  Result<ListBucketsResult> ListBuckets() override;

  Status DeleteObject(const DeleteObjectParams& p) override;
  Result<DeleteObjectsResult> DeleteObjects(const DeleteObjectsParams& p) override;
  Result<CopyObjectResult> CopyObject(const CopyObjectParams& p) override;
  Status CreateBucket(const CreateBucketParams& p) override;

 private:
  // Runs `request` and hands its 2xx answer to `parse`; when parse fails
  // with a retryable error from an <Error> inside HTTP 200, the request is
  // run again after a backoff, up to the configured attempts. Blocks the
  // calling thread (sync operations only).
  Status RunParsingErrorBody(const S3Request& request,
                             const std::function<Status(const S3Response&)>& parse);
  // The answer to a Complete that found no upload: success if the key holds
  // the object these parts make, else `no_such_upload` with what was seen.
  Result<CompleteMultipartUploadResult> CompletedEarlier(const CompleteMultipartUploadParams& p,
                                                         Error no_such_upload);

  S3Executor& executor_;
};

// Helpers shared by the operation files (and tested directly).
namespace object_client_internal {

inline constexpr std::string_view kCrc32cHeader = "x-amz-checksum-crc32c";
// Adds the header that lets the server verify `body` (none for kNone).
void AddChecksumHeader(S3Request& req, BodyChecksum checksum, std::span<const std::byte> body);

// Base64 of the MD5 of `data` (the Content-MD5 header value).
std::string ContentMd5(std::span<const std::byte> data);
std::span<const std::byte> AsBytes(std::string_view s);

// x-amz-copy-source value: "/bucket/key", percent-encoded ('/' kept).
std::string CopySource(std::string_view bucket, std::string_view key);

// Adds x-amz-meta-NAME: VALUE for each entry.
void AddUserMetadata(S3Request& req, const UserMetadata& metadata);
// The x-amz-meta-* headers of a response, names lower-cased without the prefix.
UserMetadata UserMetadataOf(const HttpHeaders& headers);

// Header value or "" when absent.
std::string HeaderOr(const HttpHeaders& headers, std::string_view name);
// Content-Length as a number; nullopt when absent or not a number.
std::optional<uint64_t> ContentLength(const HttpHeaders& headers);
// Last-Modified (HTTP date); epoch when absent or unparseable.
Timestamp LastModified(const HttpHeaders& headers);

// EINVAL "InvalidArgument" naming the operation.
Error InvalidArgument(std::string_view operation, std::string_view what);

// Checks the bucket/key of a request before anything is sent.
Status CheckBucketKey(std::string_view operation, std::string_view bucket, std::string_view key);

}  // namespace object_client_internal
}  // namespace bucketfs::s3
