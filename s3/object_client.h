// ObjectClient: one typed call per S3 operation; what every other layer of
// bucketfs sees of S3. Params struct in, Result out. Blocking calls run on the
// caller's thread while the bytes move on transport threads; the data-path
// calls (GetObject into a caller buffer, UploadPart) also come in an async
// form so the prefetcher and write-back keep many requests in flight without
// a thread each.
//
// ETags are kept exactly as the server sent them (quotes included) or empty:
// stores differ (missing, empty or unquoted ETags); ask with HeadObject when
// one is needed. Unknown XML elements are ignored.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "s3/client_config.h"
#include "s3/result.h"

namespace bucketfs::s3 {

using Timestamp = std::chrono::system_clock::time_point;

// User metadata (x-amz-meta-NAME: VALUE): names lower-case and without the
// prefix, as S3 returns them. Only HeadObject and GetObject carry it back
// (LIST does not).
using UserMetadata = std::map<std::string, std::string>;

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  Timestamp last_modified{};
  std::string etag;  // as sent, may be empty
  std::string storage_class;
};

// --- HeadObject
struct HeadObjectParams {
  std::string bucket, key;
  std::string if_match;       // optional
  std::string if_none_match;  // optional
};
struct HeadObjectResult {
  uint64_t size = 0;
  Timestamp last_modified{};
  std::string etag;
  std::string content_type;
  UserMetadata metadata;
};

// --- GetObject (ranged), streamed into a caller-owned buffer
struct GetObjectParams {
  std::string bucket, key;
  // When set, exactly [offset, offset+length) is requested; dest.size() must
  // equal length, and the GET fails (EIO "ShortBody") unless all of it came,
  // so callers need not check GetObjectResult::bytes. Unset: the whole object, dest must be large
  // enough and the result tells how many bytes were written.
  std::optional<uint64_t> offset;
  std::optional<uint64_t> length;
  std::string if_match;  // fail with EIO-class PreconditionFailed if changed
  // GetObjectAsync: the caller's thread waits for this (small) GET anyway;
  // it may run there, `done` then called before GetObjectAsync returns
  // (S3Request::run_on_caller).
  bool run_on_caller = false;
};
struct GetObjectResult {
  uint64_t bytes = 0;        // bytes written into dest
  uint64_t object_size = 0;  // from Content-Range / Content-Length
  std::string etag;
  Timestamp last_modified{};
};

// How an uploaded body is protected end to end: the server recomputes the
// checksum and rejects a body that does not match.
enum class BodyChecksum {
  kNone,
  kMd5,  // Content-MD5: checked by every S3 implementation
  // x-amz-checksum-crc32c: several times cheaper to compute than MD5. A
  // multipart upload must be created with it (CreateMultipartUploadParams)
  // and CompleteMultipartUpload repeats each part's value. For a copied part
  // (UploadPartCopy) that is the value the server reports in CopyPartResult:
  // S3 does for an upload created with kCrc32c; some servers report none.
  kCrc32c,
};

// --- PutObject
struct PutObjectParams {
  std::string bucket, key;
  std::string content_type;
  BodyChecksum checksum = BodyChecksum::kMd5;
  std::string if_none_match;  // "*" to refuse overwriting (where supported)
  UserMetadata metadata;
};
struct PutObjectResult {
  std::string etag;
};

// --- Multipart
struct CreateMultipartUploadParams {
  std::string bucket, key;
  std::string content_type;
  // kCrc32c: every part must then be sent with kCrc32c (x-amz-checksum-algorithm).
  BodyChecksum checksum = BodyChecksum::kMd5;
  UserMetadata metadata;
};
struct CreateMultipartUploadResult {
  std::string upload_id;
};
struct UploadPartParams {
  std::string bucket, key, upload_id;
  int part_number = 0;  // 1..kMaxPartNumber (s3_limits.h)
  BodyChecksum checksum = BodyChecksum::kMd5;
  // kCrc32c: the body's sum (base64, as Crc32cBase64) when the caller has it
  // already (summed while the body was filled, as the staged writer does);
  // empty: summed here. Sent as is: a wrong one makes the server refuse.
  std::string crc32c;
};
struct UploadPartResult {
  std::string etag;
  // What was sent with kCrc32c (base64), for Complete; for UploadPartCopy,
  // the server's <ChecksumCRC32C> (empty when it sent none).
  std::string checksum_crc32c;
};
struct CompletedPart {
  int part_number = 0;
  std::string etag;
  std::string checksum_crc32c;  // required when the upload was created with kCrc32c
};
struct CompleteMultipartUploadParams {
  std::string bucket, key, upload_id;
  std::vector<CompletedPart> parts;  // ascending part numbers
};
struct CompleteMultipartUploadResult {
  std::string etag;
};
struct AbortMultipartUploadParams {
  std::string bucket, key, upload_id;
};
struct ListMultipartUploadsParams {
  std::string bucket, prefix;
  std::string key_marker, upload_id_marker;
  int max_uploads = 1000;
};
struct MultipartUploadInfo {
  std::string key, upload_id;
  Timestamp initiated{};
};
struct ListMultipartUploadsResult {
  std::vector<MultipartUploadInfo> uploads;
  bool is_truncated = false;
  std::string next_key_marker, next_upload_id_marker;
};
struct UploadPartCopyParams {
  std::string bucket, key, upload_id;
  int part_number = 0;
  std::string source_bucket, source_key;
  std::optional<uint64_t> source_offset, source_length;  // range of the source
  std::string source_if_match;
};

// --- Listing
struct ListObjectsV2Params {
  std::string bucket;
  std::string prefix;
  std::string delimiter;           // usually "/" or ""
  std::string continuation_token;  // from the previous page
  std::string start_after;
  int max_keys = 1000;
};
struct ListObjectsV2Result {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;  // full prefixes, ending in the delimiter
  bool is_truncated = false;
  std::string next_continuation_token;
};
struct BucketInfo {
  std::string name;
  Timestamp creation_date{};
};
struct ListBucketsResult {
  std::vector<BucketInfo> buckets;
};

// --- Delete / Copy / bucket
struct DeleteObjectParams {
  std::string bucket, key;
};
struct DeleteObjectsParams {
  std::string bucket;
  std::vector<std::string> keys;  // at most 1000
  bool quiet = true;
};
struct DeleteObjectsResult {
  std::vector<std::string> deleted;
  std::vector<std::pair<std::string, Error>> failed;  // key, why
};
struct CopyObjectParams {
  std::string bucket, key;  // destination
  std::string source_bucket, source_key;
  std::string source_if_match;
  // Set: the copy gets exactly this user metadata (x-amz-metadata-directive
  // REPLACE, also how an object's metadata is changed in place: a copy onto
  // itself). Unset: the source's metadata is copied.
  std::optional<UserMetadata> replace_metadata;
};
struct CopyObjectResult {
  std::string etag;
  Timestamp last_modified{};
  // <ChecksumCRC32C> (UploadPartCopy): the copied part's sum, which S3 gives
  // when the upload was created with kCrc32c; empty when the server sent none.
  std::string checksum_crc32c;
};
struct CreateBucketParams {
  std::string bucket;
};

class ObjectClient {
 public:
  virtual ~ObjectClient() = default;

  virtual Result<HeadObjectResult> HeadObject(const HeadObjectParams& p) = 0;
  virtual Result<GetObjectResult> GetObject(const GetObjectParams& p,
                                            std::span<std::byte> dest) = 0;
  // Async form: `dest` must stay valid until `done` runs (on a transport thread).
  virtual void GetObjectAsync(const GetObjectParams& p, std::span<std::byte> dest,
                              std::function<void(Result<GetObjectResult>)> done) = 0;
  virtual Result<PutObjectResult> PutObject(const PutObjectParams& p,
                                            std::span<const std::byte> body) = 0;

  virtual Result<CreateMultipartUploadResult> CreateMultipartUpload(
      const CreateMultipartUploadParams& p) = 0;
  virtual Result<UploadPartResult> UploadPart(const UploadPartParams& p,
                                              std::span<const std::byte> body) = 0;
  // Async form: `body` must stay valid until `done` runs.
  virtual void UploadPartAsync(const UploadPartParams& p, std::span<const std::byte> body,
                               std::function<void(Result<UploadPartResult>)> done) = 0;
  virtual Result<UploadPartResult> UploadPartCopy(const UploadPartCopyParams& p) = 0;
  virtual Result<CompleteMultipartUploadResult> CompleteMultipartUpload(
      const CompleteMultipartUploadParams& p) = 0;
  virtual Status AbortMultipartUpload(const AbortMultipartUploadParams& p) = 0;
  virtual Result<ListMultipartUploadsResult> ListMultipartUploads(
      const ListMultipartUploadsParams& p) = 0;

  virtual Result<ListObjectsV2Result> ListObjectsV2(const ListObjectsV2Params& p) = 0;
  virtual Result<ListBucketsResult> ListBuckets() = 0;

  virtual Status DeleteObject(const DeleteObjectParams& p) = 0;
  virtual Result<DeleteObjectsResult> DeleteObjects(const DeleteObjectsParams& p) = 0;
  virtual Result<CopyObjectResult> CopyObject(const CopyObjectParams& p) = 0;
  virtual Status CreateBucket(const CreateBucketParams& p) = 0;
};

class HttpTransport;
class S3Executor;

// The real client: libcurl transport + SigV4 + retries, from one config.
// Owns its transport and executor. `observer` (may be null) hears of every
// HTTP attempt (s3/request_observer.h); the client keeps it alive.
class RequestObserver;
Result<std::unique_ptr<ObjectClient>> MakeS3Client(
    const ClientConfig& config, const EnvMap& env,
    std::shared_ptr<RequestObserver> observer = nullptr);

// A client over a given executor (tests use a FakeHttpTransport under it).
std::unique_ptr<ObjectClient> MakeObjectClient(S3Executor& executor);

}  // namespace bucketfs::s3
