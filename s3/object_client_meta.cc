// Listings, deletes, CopyObject and CreateBucket; MakeObjectClient.
#include "s3/object_client_impl.h"
#include "s3/s3_xml_responses.h"

namespace bucketfs::s3 {

using namespace object_client_internal;  // NOLINT(google-build-using-namespace)

namespace {
constexpr size_t kMaxDeleteKeys = 1000;  // S3's limit per DeleteObjects
}  // namespace

Result<ListObjectsV2Result> S3ObjectClient::ListObjectsV2(const ListObjectsV2Params& p) {
  constexpr std::string_view kOp = "ListObjectsV2";
  if (p.bucket.empty()) return InvalidArgument(kOp, "empty bucket name");
  if (p.max_keys < 0) return InvalidArgument(kOp, "max_keys must be >= 0");
  S3Request req;
  req.method = "GET";
  req.op = S3Op::kList;
  req.bucket = p.bucket;
  // encoding-type=url: keys holding characters XML 1.0 cannot carry survive;
  // the parser decodes only when the answer says it encoded.
  req.query = {{"list-type", "2"}, {"encoding-type", "url"}};
  if (!p.prefix.empty()) req.query.emplace_back("prefix", p.prefix);
  if (!p.delimiter.empty()) req.query.emplace_back("delimiter", p.delimiter);
  if (!p.continuation_token.empty()) {
    req.query.emplace_back("continuation-token", p.continuation_token);
  }
  if (!p.start_after.empty()) req.query.emplace_back("start-after", p.start_after);
  req.query.emplace_back("max-keys", std::to_string(p.max_keys));
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  auto page = ParseListObjectsV2(r->body);
  // A store that answers a token with the same token would be paged forever.
  if (page.ok() && page->is_truncated && !p.continuation_token.empty() &&
      page->next_continuation_token == p.continuation_token) {
    return MakeError(EIO, "MalformedResponse",
                     std::string(kOp) + " s3://" + p.bucket + "/" + p.prefix +
                         ": NextContinuationToken repeats the continuation-token sent; the "
                         "listing would never end");
  }
  return page;
}

Result<ListBucketsResult> S3ObjectClient::ListBuckets() {
  S3Request req;
  req.method = "GET";
  req.op = S3Op::kListBuckets;
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  return ParseListBuckets(r->body);
}

Status S3ObjectClient::DeleteObject(const DeleteObjectParams& p) {
  if (Status st = CheckBucketKey("DeleteObject", p.bucket, p.key); !st.ok()) return st;
  S3Request req;
  req.method = "DELETE";
  req.op = S3Op::kDelete;
  req.bucket = p.bucket;
  req.key = p.key;
  return executor_.ExecuteSync(std::move(req)).status();
}

Result<DeleteObjectsResult> S3ObjectClient::DeleteObjects(const DeleteObjectsParams& p) {
  constexpr std::string_view kOp = "DeleteObjects";
  if (p.bucket.empty()) return InvalidArgument(kOp, "empty bucket name");
  if (p.keys.size() > kMaxDeleteKeys) {
    return InvalidArgument(kOp, std::to_string(p.keys.size()) + " keys, at most " +
                                    std::to_string(kMaxDeleteKeys) + " per request");
  }
  for (const auto& k : p.keys) {
    if (k.empty()) return InvalidArgument(kOp, "empty key");
  }
  if (p.keys.empty()) return DeleteObjectsResult{};  // S3 rejects an empty <Delete>
  const std::string body = BuildDeleteObjectsXml(p.keys, p.quiet);
  S3Request req;
  req.method = "POST";
  req.op = S3Op::kDeleteMulti;
  req.bucket = p.bucket;
  req.query = {{"delete", ""}};
  req.headers.emplace_back("Content-Type", "application/xml");
  req.headers.emplace_back("Content-MD5", ContentMd5(AsBytes(body)));  // required by S3
  req.body = AsBytes(body);
  req.idempotent = true;  // deleting a deleted key succeeds
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  return ParseDeleteResult(r->body, p.keys, p.quiet);
}

Result<CopyObjectResult> S3ObjectClient::CopyObject(const CopyObjectParams& p) {
  constexpr std::string_view kOp = "CopyObject";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st.error();
  if (Status st = CheckBucketKey(kOp, p.source_bucket, p.source_key); !st.ok()) return st.error();
  S3Request req;
  req.method = "PUT";
  req.op = S3Op::kCopy;
  req.bucket = p.bucket;
  req.key = p.key;
  req.headers.emplace_back("x-amz-copy-source", CopySource(p.source_bucket, p.source_key));
  if (!p.source_if_match.empty()) {
    req.headers.emplace_back("x-amz-copy-source-if-match", p.source_if_match);
  }
  if (p.replace_metadata) {
    req.headers.emplace_back("x-amz-metadata-directive", "REPLACE");
    AddUserMetadata(req, *p.replace_metadata);
  }
  CopyObjectResult out;
  Status st = RunParsingErrorBody(req, [&](const S3Response& resp) -> Status {
    auto parsed = ParseCopyObjectResult(resp.body);
    if (!parsed.ok()) return parsed.error();
    out = std::move(*parsed);
    return Status::Ok();
  });
  if (!st.ok()) return st.error();
  return out;
}

Status S3ObjectClient::CreateBucket(const CreateBucketParams& p) {
  if (p.bucket.empty()) return InvalidArgument("CreateBucket", "empty bucket name");
  const std::string body = BuildCreateBucketXml(executor_.config().region);
  S3Request req;
  req.method = "PUT";
  req.op = S3Op::kCreateBucket;
  req.bucket = p.bucket;
  if (!body.empty()) {
    req.headers.emplace_back("Content-Type", "application/xml");
    req.body = AsBytes(body);
  }
  return executor_.ExecuteSync(std::move(req)).status();
}

std::unique_ptr<ObjectClient> MakeObjectClient(S3Executor& executor) {
  return std::make_unique<S3ObjectClient>(executor);
}

}  // namespace bucketfs::s3
