// Multipart uploads: Create, UploadPartCopy, Complete, Abort, List; and the
// retry loop for answers that carry an <Error> inside HTTP 200.
#include <thread>

#include "s3/multipart_etag.h"
#include "s3/object_client_impl.h"
#include "s3/retry_policy.h"
#include "s3/s3_limits.h"
#include "s3/s3_xml_responses.h"

namespace bucketfs::s3 {

using namespace object_client_internal;  // NOLINT(google-build-using-namespace)

Status S3ObjectClient::RunParsingErrorBody(const S3Request& request,
                                           const std::function<Status(const S3Response&)>& parse) {
  const ClientConfig& config = executor_.config();
  const RetryPolicy policy(
      RetryOptions{std::max(1, config.max_attempts), config.backoff_base, config.backoff_max});
  bool earlier_attempt_ambiguous = false;
  for (int attempt = 1;; ++attempt) {
    auto r = executor_.ExecuteSync(request);
    if (!r.ok()) {
      Error e = r.error();
      if (earlier_attempt_ambiguous && e.code == "NoSuchUpload") {
        // The first attempt may have completed the upload before failing.
        e.message +=
            " (an earlier attempt failed after the server accepted it; the upload may "
            "have completed: check the object with HeadObject)";
      }
      return e;
    }
    Status st = parse(*r);
    if (st.ok()) return st;
    const Error& e = st.error();
    const bool error_in_200 = e.http_status >= 200 && e.http_status < 300;
    if (!error_in_200 || !e.retryable || attempt >= policy.options().max_attempts) return st;
    earlier_attempt_ambiguous = true;
    std::this_thread::sleep_for(policy.NextDelay(attempt));
  }
}

Result<CreateMultipartUploadResult> S3ObjectClient::CreateMultipartUpload(
    const CreateMultipartUploadParams& p) {
  if (Status st = CheckBucketKey("CreateMultipartUpload", p.bucket, p.key); !st.ok()) {
    return st.error();
  }
  S3Request req;
  req.method = "POST";
  req.op = S3Op::kCreateMultipart;
  req.bucket = p.bucket;
  req.key = p.key;
  req.query = {{"uploads", ""}};
  if (!p.content_type.empty()) req.headers.emplace_back("Content-Type", p.content_type);
  if (p.checksum == BodyChecksum::kCrc32c) {
    req.headers.emplace_back("x-amz-checksum-algorithm", "CRC32C");
  }
  AddUserMetadata(req, p.metadata);
  // Idempotent by choice: a repeat after a lost answer only orphans an
  // upload id (see object_client_impl.h).
  req.idempotent = true;
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  return ParseInitiateMultipartUpload(r->body);
}

Result<UploadPartResult> S3ObjectClient::UploadPartCopy(const UploadPartCopyParams& p) {
  constexpr std::string_view kOp = "UploadPartCopy";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st.error();
  if (Status st = CheckBucketKey(kOp, p.source_bucket, p.source_key); !st.ok()) return st.error();
  if (p.upload_id.empty()) return InvalidArgument(kOp, "empty upload id");
  if (p.part_number < 1 || p.part_number > kMaxPartNumber) {
    return InvalidArgument(kOp, "part number " + std::to_string(p.part_number) + " outside 1.." +
                                    std::to_string(kMaxPartNumber));
  }
  S3Request req;
  req.method = "PUT";
  req.op = S3Op::kUploadPartCopy;
  req.bucket = p.bucket;
  req.key = p.key;
  req.query = {{"partNumber", std::to_string(p.part_number)}, {"uploadId", p.upload_id}};
  req.headers.emplace_back("x-amz-copy-source", CopySource(p.source_bucket, p.source_key));
  if (p.source_offset || p.source_length) {
    if (!p.source_length || *p.source_length == 0) {
      return InvalidArgument(kOp, "a source range needs a length > 0");
    }
    const uint64_t first = p.source_offset.value_or(0);
    req.headers.emplace_back(
        "x-amz-copy-source-range",
        "bytes=" + std::to_string(first) + "-" + std::to_string(first + *p.source_length - 1));
  }
  if (!p.source_if_match.empty()) {
    req.headers.emplace_back("x-amz-copy-source-if-match", p.source_if_match);
  }
  UploadPartResult out;
  Status st = RunParsingErrorBody(req, [&](const S3Response& resp) -> Status {
    auto parsed = ParseCopyPartResult(resp.body);
    if (!parsed.ok()) return parsed.error();
    if (parsed->etag.empty()) {
      return MakeError(EIO, "MissingETag",
                       "UploadPartCopy: the server sent no ETag for part " +
                           std::to_string(p.part_number) + " of upload " + p.upload_id);
    }
    out.etag = std::move(parsed->etag);
    out.checksum_crc32c = std::move(parsed->checksum_crc32c);
    return Status::Ok();
  });
  if (!st.ok()) return st.error();
  return out;
}

Result<CompleteMultipartUploadResult> S3ObjectClient::CompleteMultipartUpload(
    const CompleteMultipartUploadParams& p) {
  constexpr std::string_view kOp = "CompleteMultipartUpload";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st.error();
  if (p.upload_id.empty()) return InvalidArgument(kOp, "empty upload id");
  if (p.parts.empty()) return InvalidArgument(kOp, "no parts");
  for (size_t i = 0; i < p.parts.size(); ++i) {
    const CompletedPart& part = p.parts[i];
    if (part.part_number < 1 || part.part_number > kMaxPartNumber ||
        (i > 0 && part.part_number <= p.parts[i - 1].part_number)) {
      return InvalidArgument(
          kOp, "part numbers must ascend within 1.." + std::to_string(kMaxPartNumber));
    }
    if (part.etag.empty()) {
      return InvalidArgument(kOp, "part " + std::to_string(part.part_number) + " has no ETag");
    }
  }
  const std::string body = BuildCompleteMultipartUploadXml(p.parts);
  S3Request req;
  req.method = "POST";
  req.op = S3Op::kCompleteMultipart;
  req.bucket = p.bucket;
  req.key = p.key;
  req.query = {{"uploadId", p.upload_id}};
  req.headers.emplace_back("Content-Type", "application/xml");
  req.body = AsBytes(body);
  // Retried on 5xx and broken connections, as AWS asks of its clients: a
  // repeat after a lost answer finds no upload (NoSuchUpload), which is
  // resolved below by looking at the object the first attempt made.
  req.idempotent = true;
  // S3 may take minutes to assemble a large object (AWS sends whitespace
  // meanwhile; other stores send nothing): giving up after the usual 30 s of
  // silence reported a failure for an object the store then created.
  req.min_low_speed_time = std::chrono::minutes(10);
  CompleteMultipartUploadResult out;
  Status st = RunParsingErrorBody(req, [&](const S3Response& resp) -> Status {
    auto parsed = ParseCompleteMultipartUpload(resp.body);
    if (!parsed.ok()) return parsed.error();
    out = std::move(*parsed);
    return Status::Ok();
  });
  if (!st.ok()) {
    if (st.error().code == "NoSuchUpload") return CompletedEarlier(p, st.error());
    return st.error();
  }
  return out;
}

// NoSuchUpload from Complete: the upload was completed (by an attempt whose
// answer was lost) or aborted. Success only when the key holds the object
// exactly these parts make, known by its multipart ETag; anything else keeps
// the error, so a close() never reports an object it cannot show.
Result<CompleteMultipartUploadResult> S3ObjectClient::CompletedEarlier(
    const CompleteMultipartUploadParams& p, Error no_such_upload) {
  const std::optional<std::string> expected = ExpectedMultipartEtag(p.parts);
  if (!expected) {
    no_such_upload.message +=
        " (the upload may have been completed by an attempt whose answer was lost; the "
        "parts' ETags are not MD5s, so the object cannot be recognised: check it with "
        "HeadObject)";
    return no_such_upload;
  }
  auto head = HeadObject(HeadObjectParams{p.bucket, p.key, {}, {}});
  if (head.ok() && SameEtag(head->etag, *expected)) {
    return CompleteMultipartUploadResult{head->etag};
  }
  no_such_upload.message +=
      head.ok() ? " (the key holds another object, ETag " + head->etag + ", not " + *expected + ")"
                : " (and the key holds no object: " + head.error().ToString() + ")";
  return no_such_upload;
}

Status S3ObjectClient::AbortMultipartUpload(const AbortMultipartUploadParams& p) {
  constexpr std::string_view kOp = "AbortMultipartUpload";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st;
  if (p.upload_id.empty()) return InvalidArgument(kOp, "empty upload id");
  S3Request req;
  req.method = "DELETE";
  req.op = S3Op::kAbortMultipart;
  req.bucket = p.bucket;
  req.key = p.key;
  req.query = {{"uploadId", p.upload_id}};
  auto r = executor_.ExecuteSync(std::move(req));
  return r.status();
}

Result<ListMultipartUploadsResult> S3ObjectClient::ListMultipartUploads(
    const ListMultipartUploadsParams& p) {
  if (p.bucket.empty()) return InvalidArgument("ListMultipartUploads", "empty bucket name");
  S3Request req;
  req.method = "GET";
  req.op = S3Op::kListMultipart;
  req.bucket = p.bucket;
  req.query = {{"uploads", ""}, {"encoding-type", "url"}};
  if (!p.prefix.empty()) req.query.emplace_back("prefix", p.prefix);
  if (!p.key_marker.empty()) req.query.emplace_back("key-marker", p.key_marker);
  if (!p.upload_id_marker.empty()) req.query.emplace_back("upload-id-marker", p.upload_id_marker);
  if (p.max_uploads > 0) req.query.emplace_back("max-uploads", std::to_string(p.max_uploads));
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  return ParseListMultipartUploads(r->body);
}

}  // namespace bucketfs::s3
