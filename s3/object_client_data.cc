// The data path: HeadObject, GetObject (sync and async, streamed into the
// caller's buffer), PutObject, UploadPart (sync and async).
#include <cstring>

#include "s3/http_header_values.h"
#include "s3/object_client_impl.h"
#include "s3/s3_limits.h"

namespace bucketfs::s3 {
namespace {

using namespace object_client_internal;  // NOLINT(google-build-using-namespace)

// Writes body bytes straight into the caller's span, in order, never past
// its end. Calls are serialized by the executor; the counters are read only
// after the request's callback ran.
class SpanSink final : public BodySink {
 public:
  SpanSink(std::span<std::byte> dest, bool ranged) : dest_(dest), ranged_(ranged) {}

  Status Write(uint64_t offset, std::span<const std::byte> data) override {
    if (offset != written_) {
      return MakeError(EIO, "Internal",
                       "GetObject: body bytes out of order (offset " + std::to_string(offset) +
                           ", expected " + std::to_string(written_) + ")");
    }
    if (data.size() > dest_.size() - written_) {
      if (ranged_) {
        return MakeError(EIO, "ResponseTooLong",
                         "GetObject: the server sent more than the " +
                             std::to_string(dest_.size()) + " bytes requested");
      }
      return MakeError(EOVERFLOW, "BufferTooSmall",
                       "GetObject: the object is larger than the " + std::to_string(dest_.size()) +
                           "-byte buffer");
    }
    std::memcpy(dest_.data() + written_, data.data(), data.size());
    written_ += data.size();
    return Status::Ok();
  }

  uint64_t written() const { return written_; }

 private:
  const std::span<std::byte> dest_;
  const bool ranged_;
  uint64_t written_ = 0;
};

struct GetPlan {
  S3Request request;
  bool ranged = false;
  uint64_t offset = 0, length = 0;
};

Result<GetPlan> PlanGet(const GetObjectParams& p, size_t dest_size) {
  constexpr std::string_view kOp = "GetObject";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st.error();
  GetPlan plan;
  plan.request.method = "GET";
  plan.request.op = S3Op::kGet;
  plan.request.bucket = p.bucket;
  plan.request.key = p.key;
  plan.request.run_on_caller = p.run_on_caller;
  if (!p.if_match.empty()) plan.request.headers.emplace_back("If-Match", p.if_match);
  if (p.offset || p.length) {
    if (!p.length) return InvalidArgument(kOp, "an offset needs a length");
    if (*p.length == 0) return InvalidArgument(kOp, "length must be > 0");
    if (dest_size != *p.length) {
      return InvalidArgument(kOp, "buffer size " + std::to_string(dest_size) +
                                      " differs from the requested length " +
                                      std::to_string(*p.length));
    }
    plan.ranged = true;
    plan.offset = p.offset.value_or(0);
    plan.length = *p.length;
    if (plan.offset > UINT64_MAX - plan.length) return InvalidArgument(kOp, "range overflows");
    plan.request.range = ByteRange{plan.offset, plan.length};
  }
  return plan;
}

// Checks a finished GET: never report a short, long or misplaced body.
Result<GetObjectResult> FinishGet(const GetPlan& plan, Result<S3Response> r, const SpanSink& sink) {
  constexpr std::string_view kOp = "GetObject";
  if (!r.ok()) return r.error();
  const S3Response& resp = *r;
  GetObjectResult out;
  out.bytes = sink.written();
  out.etag = HeaderOr(resp.headers, "ETag");
  out.last_modified = LastModified(resp.headers);
  const std::string range_header = HeaderOr(resp.headers, "Content-Range");
  std::optional<ContentRange> range;
  if (!range_header.empty()) {
    range = ParseContentRange(range_header);
    if (!range) {
      return MakeError(EIO, "MalformedResponse",
                       std::string(kOp) + ": bad Content-Range \"" + range_header + "\"");
    }
  }
  if (plan.ranged) {
    // The executor let through only bytes of the range asked for, each at its
    // offset; an answer that ends early (the object is shorter) is refused
    // here, so a ranged GET fills the whole buffer or fails.
    if (out.bytes != plan.length) {
      return MakeError(EIO, "ShortBody",
                       std::string(kOp) + " s3://" + plan.request.bucket + "/" + plan.request.key +
                           " bytes " + std::to_string(plan.offset) + "-" +
                           std::to_string(plan.offset + plan.length - 1) + ": received " +
                           std::to_string(out.bytes) + " of " + std::to_string(plan.length) +
                           " requested bytes");
    }
    if (range && range->total) {
      out.object_size = *range->total;
    } else if (resp.status == 200) {
      out.object_size = out.bytes;  // whole object answered, offset 0
    } else {
      out.object_size = 0;  // "bytes a-b/*": size unknown
    }
    return out;
  }
  // Whole object.
  if (auto len = ContentLength(resp.headers); len && *len != out.bytes) {
    return MakeError(EIO, "ShortBody",
                     std::string(kOp) + ": received " + std::to_string(out.bytes) +
                         " bytes, Content-Length said " + std::to_string(*len));
  }
  out.object_size = (range && range->total) ? *range->total : out.bytes;
  if (out.object_size != out.bytes) {
    return MakeError(EIO, "ShortBody",
                     std::string(kOp) + ": received " + std::to_string(out.bytes) + " of " +
                         std::to_string(out.object_size) + " bytes");
  }
  return out;
}

Result<S3Request> PlanUploadPart(const UploadPartParams& p, std::span<const std::byte> body) {
  constexpr std::string_view kOp = "UploadPart";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st.error();
  if (p.upload_id.empty()) return InvalidArgument(kOp, "empty upload id");
  if (p.part_number < 1 || p.part_number > kMaxPartNumber) {
    return InvalidArgument(kOp, "part number " + std::to_string(p.part_number) + " outside 1.." +
                                    std::to_string(kMaxPartNumber));
  }
  S3Request req;
  req.method = "PUT";
  req.op = S3Op::kUploadPart;
  req.bucket = p.bucket;
  req.key = p.key;
  req.query = {{"partNumber", std::to_string(p.part_number)}, {"uploadId", p.upload_id}};
  req.body = body;
  if (p.checksum == BodyChecksum::kCrc32c && !p.crc32c.empty()) {
    req.headers.emplace_back(std::string(kCrc32cHeader), p.crc32c);
  } else {
    AddChecksumHeader(req, p.checksum, body);
  }
  return req;
}

Result<UploadPartResult> FinishUploadPart(const UploadPartParams& p, const std::string& crc,
                                          Result<S3Response> r) {
  if (!r.ok()) return r.error();
  std::string etag = HeaderOr(r->headers, "ETag");
  if (etag.empty()) {
    // CompleteMultipartUpload must name every part by its ETag.
    return MakeError(EIO, "MissingETag",
                     "UploadPart: the server sent no ETag for part " +
                         std::to_string(p.part_number) + " of upload " + p.upload_id);
  }
  return UploadPartResult{std::move(etag), crc};
}

}  // namespace

Result<HeadObjectResult> S3ObjectClient::HeadObject(const HeadObjectParams& p) {
  constexpr std::string_view kOp = "HeadObject";
  if (Status st = CheckBucketKey(kOp, p.bucket, p.key); !st.ok()) return st.error();
  S3Request req;
  req.method = "HEAD";
  req.op = S3Op::kHead;
  req.bucket = p.bucket;
  req.key = p.key;
  if (!p.if_match.empty()) req.headers.emplace_back("If-Match", p.if_match);
  if (!p.if_none_match.empty()) req.headers.emplace_back("If-None-Match", p.if_none_match);
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  auto size = ContentLength(r->headers);
  if (!size) {
    return MakeError(EIO, "MalformedResponse",
                     std::string(kOp) + ": missing or bad Content-Length \"" +
                         HeaderOr(r->headers, "Content-Length") + "\"");
  }
  HeadObjectResult out;
  out.size = *size;
  out.last_modified = LastModified(r->headers);
  out.etag = HeaderOr(r->headers, "ETag");
  out.content_type = HeaderOr(r->headers, "Content-Type");
  out.metadata = UserMetadataOf(r->headers);
  return out;
}

Result<GetObjectResult> S3ObjectClient::GetObject(const GetObjectParams& p,
                                                  std::span<std::byte> dest) {
  auto plan = PlanGet(p, dest.size());
  if (!plan.ok()) return plan.error();
  auto sink = std::make_shared<SpanSink>(dest, plan->ranged);
  auto r = executor_.ExecuteSync(plan->request, sink);
  return FinishGet(*plan, std::move(r), *sink);
}

void S3ObjectClient::GetObjectAsync(const GetObjectParams& p, std::span<std::byte> dest,
                                    std::function<void(Result<GetObjectResult>)> done) {
  auto plan = PlanGet(p, dest.size());
  if (!plan.ok()) {
    done(plan.error());
    return;
  }
  auto sink = std::make_shared<SpanSink>(dest, plan->ranged);
  S3Request req = plan->request;
  executor_.Execute(std::move(req), sink,
                    [plan = std::move(*plan), sink, done = std::move(done)](Result<S3Response> r) {
                      done(FinishGet(plan, std::move(r), *sink));
                    });
}

Result<PutObjectResult> S3ObjectClient::PutObject(const PutObjectParams& p,
                                                  std::span<const std::byte> body) {
  if (Status st = CheckBucketKey("PutObject", p.bucket, p.key); !st.ok()) return st.error();
  S3Request req;
  req.method = "PUT";
  req.op = S3Op::kPut;
  req.bucket = p.bucket;
  req.key = p.key;
  req.body = body;
  AddChecksumHeader(req, p.checksum, body);
  if (!p.content_type.empty()) req.headers.emplace_back("Content-Type", p.content_type);
  if (!p.if_none_match.empty()) req.headers.emplace_back("If-None-Match", p.if_none_match);
  AddUserMetadata(req, p.metadata);
  auto r = executor_.ExecuteSync(std::move(req));
  if (!r.ok()) return r.error();
  // May be empty (some stores send none); callers HeadObject when they need it.
  return PutObjectResult{HeaderOr(r->headers, "ETag")};
}

Result<UploadPartResult> S3ObjectClient::UploadPart(const UploadPartParams& p,
                                                    std::span<const std::byte> body) {
  auto req = PlanUploadPart(p, body);
  if (!req.ok()) return req.error();
  const std::string crc = HeaderOr(req->headers, kCrc32cHeader);
  return FinishUploadPart(p, crc, executor_.ExecuteSync(std::move(*req)));
}

void S3ObjectClient::UploadPartAsync(const UploadPartParams& p, std::span<const std::byte> body,
                                     std::function<void(Result<UploadPartResult>)> done) {
  auto req = PlanUploadPart(p, body);
  if (!req.ok()) {
    done(req.error());
    return;
  }
  std::string crc = HeaderOr(req->headers, kCrc32cHeader);
  executor_.Execute(std::move(*req), nullptr,
                    [p, crc = std::move(crc), done = std::move(done)](Result<S3Response> r) {
                      done(FinishUploadPart(p, crc, std::move(r)));
                    });
}

}  // namespace bucketfs::s3
