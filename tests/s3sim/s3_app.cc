#include "tests/s3sim/s3_app.h"

#include <cstdio>
#include <ctime>

#include "tests/s3sim/util.h"
#include "tests/s3sim/xml_writer.h"

namespace s3sim {
namespace {

constexpr std::string_view kAdminPrefix = "/__s3sim/";
constexpr size_t kMaxKeyBytes = 1024;

bool IsAdmin(const HttpRequest& req) { return req.raw_path.rfind(kAdminPrefix, 0) == 0; }

}  // namespace

HttpResponse XmlResponse(int status, std::string body) {
  HttpResponse resp;
  resp.status = status;
  resp.body = std::move(body);
  resp.AddHeader("Content-Type", "application/xml");
  return resp;
}

HttpResponse ErrorResponse(const S3Error& error, const S3Request& r) {
  XmlWriter xml("Error");
  xml.Elem("Code", error.code).Elem("Message", error.message);
  std::string resource = "/" + r.bucket + (r.key.empty() ? "" : "/" + r.key);
  xml.Elem("Resource", resource).Elem("RequestId", r.request_id);
  std::string doc = xml.Finish();
  // S3 error documents have no namespace on <Error>.
  std::string ns = " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";
  doc.erase(doc.find(ns), ns.size());
  return XmlResponse(error.status, std::move(doc));
}

std::string ClassifyOperation(const S3Request& r) {
  const std::string& m = r.http->method;
  if (r.bucket.empty()) return m == "GET" ? "ListBuckets" : "";
  if (r.key.empty()) {
    if (m == "PUT") return r.query.empty() ? "CreateBucket" : "";
    if (m == "DELETE") return r.query.empty() ? "DeleteBucket" : "";
    if (m == "HEAD") return "HeadBucket";
    if (m == "POST") return r.Has("delete") ? "DeleteObjects" : "";
    if (m == "GET") {
      if (r.Has("uploads")) return "ListMultipartUploads";
      if (r.Has("location")) return "GetBucketLocation";
      if (r.Q("list-type") == "2") return "ListObjectsV2";
      for (const char* sub : {"acl", "policy", "versioning", "lifecycle", "cors", "tagging",
                              "versions", "website", "logging", "notification", "encryption"}) {
        if (r.Has(sub)) return "";
      }
      return "ListObjects";
    }
    return "";
  }
  const bool copy = r.Header("x-amz-copy-source") != nullptr;
  if (m == "GET") return r.Has("uploadId") ? "ListParts" : "GetObject";
  if (m == "HEAD") return "HeadObject";
  if (m == "PUT") {
    if (r.Has("partNumber") || r.Has("uploadId")) return copy ? "UploadPartCopy" : "UploadPart";
    for (const char* sub : {"acl", "tagging", "retention", "legal-hold"}) {
      if (r.Has(sub)) return "";
    }
    return copy ? "CopyObject" : "PutObject";
  }
  if (m == "POST") {
    if (r.Has("uploads")) return "CreateMultipartUpload";
    if (r.Has("uploadId")) return "CompleteMultipartUpload";
    return "";
  }
  if (m == "DELETE") return r.Has("uploadId") ? "AbortMultipartUpload" : "DeleteObject";
  return "";
}

S3App::S3App(AuthConfig auth, Store* store, FaultInjector* faults, Stats* stats)
    : auth_(std::move(auth)), store_(store), faults_(faults), stats_(stats) {}

std::string S3App::NextRequestId() {
  char buf[24];
  std::snprintf(buf, sizeof buf, "S3SIM%011llX",
                static_cast<unsigned long long>(request_counter_.fetch_add(1)) + 1);
  return buf;
}

void S3App::Stamp(HttpResponse& resp, const std::string& request_id) {
  resp.AddHeader("x-amz-request-id", request_id);
  resp.AddHeader("x-amz-id-2", Base64(request_id));
  resp.AddHeader("Server", "s3sim");
}

HttpResponse S3App::ProtocolError(int status, const std::string& code, const std::string& message) {
  HttpRequest dummy;
  S3Request r;
  r.http = &dummy;
  r.request_id = NextRequestId();
  HttpResponse resp = ErrorResponse({status, code, message}, r);
  Stamp(resp, r.request_id);
  return resp;
}

std::optional<HttpResponse> S3App::Precheck(const HttpRequest& req) {
  if (IsAdmin(req)) return std::nullopt;
  AuthOutcome auth = VerifyRequest(req, auth_, std::time(nullptr));
  if (auth.ok) return std::nullopt;
  HttpRequest copy_head = req;
  S3Request r;
  r.http = &copy_head;
  r.request_id = NextRequestId();
  HttpResponse resp = ErrorResponse({auth.status, auth.code, auth.message}, r);
  if (auth.code == "SignatureDoesNotMatch" && !auth.canonical_request.empty()) {
    // Like S3, show what we signed so client bugs are easy to see.
    std::string extra = "<CanonicalRequest>" + XmlEscape(auth.canonical_request) +
                        "</CanonicalRequest><StringToSign>" + XmlEscape(auth.string_to_sign) +
                        "</StringToSign>";
    resp.body.insert(resp.body.rfind("</Error>"), extra);
  }
  stats_->CountRequest("AuthFailure");
  Stamp(resp, r.request_id);
  return resp;
}

std::optional<S3Error> S3App::Resolve(HttpRequest& req, S3Request* out) {
  out->http = &req;
  auto query = ParseQuery(req.raw_query);
  auto path = UriDecode(req.raw_path);
  if (!query || !path || path->empty() || (*path)[0] != '/') {
    return S3Error{400, "InvalidURI", "Couldn't parse the specified URI."};
  }
  for (auto& [k, v] : *query) out->query.emplace(k, v);
  std::string host;
  if (const std::string* h = req.Header("host")) host = ToLower(h->substr(0, h->rfind(':')));
  constexpr std::string_view kVhostSuffix = ".localhost";
  if (host.size() > kVhostSuffix.size() &&
      host.compare(host.size() - kVhostSuffix.size(), kVhostSuffix.size(), kVhostSuffix) == 0) {
    out->bucket = host.substr(0, host.size() - kVhostSuffix.size());
    out->key = path->substr(1);
  } else {
    size_t slash = path->find('/', 1);
    out->bucket = path->substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    if (slash != std::string::npos) out->key = path->substr(slash + 1);
  }
  if (out->key.size() > kMaxKeyBytes) {
    return S3Error{400, "KeyTooLongError", "Your key is too long"};
  }
  if (!IsValidUtf8(out->key)) {
    return S3Error{400, "InvalidArgument", "Object keys must be valid UTF-8"};
  }
  return std::nullopt;
}

HttpResponse S3App::HandleAdmin(const HttpRequest& req) {
  HttpResponse resp;
  std::string_view what = std::string_view(req.raw_path).substr(kAdminPrefix.size());
  if (what == "stats" && req.method == "GET") {
    resp.body = stats_->Json();
    resp.AddHeader("Content-Type", "application/json");
  } else if (what == "reset-stats" && req.method == "POST") {
    stats_->Reset();
    resp.status = 204;
  } else if (what == "restart-faults" && req.method == "POST") {
    faults_->Restart();
    resp.status = 204;
  } else if (what == "health") {
    resp.body = "ok\n";
  } else {
    resp.status = 404;
    resp.body = "unknown admin endpoint\n";
  }
  return resp;
}

void S3App::Sent(const HttpResponse& resp) {
  if (resp.counted) stats_->RequestEnded();
}

HttpResponse S3App::Handle(HttpRequest& req) {
  if (IsAdmin(req)) return HandleAdmin(req);
  stats_->RequestStarted();
  S3Request r;
  r.request_id = NextRequestId();
  HttpResponse resp;
  if (auto err = Resolve(req, &r)) {
    resp = ErrorResponse(*err, r);
  } else {
    resp = Dispatch(r);
  }
  Stamp(resp, r.request_id);
  resp.counted = true;
  return resp;
}

HttpResponse S3App::Dispatch(S3Request& r) {
  HttpRequest& req = *r.http;
  r.op = ClassifyOperation(r);
  if (r.op.empty()) {
    stats_->CountRequest("Unsupported");
    return ErrorResponse({501, "NotImplemented",
                          "A header or query you provided implies functionality that is not "
                          "implemented"},
                         r);
  }
  stats_->CountRequest(r.op);
  if (const std::string* hash = req.Header("x-amz-content-sha256");
      hash && hash->size() == 64 && Hex(Sha256(req.body)) != ToLower(*hash)) {
    return ErrorResponse({400, "XAmzContentSHA256Mismatch",
                          "The provided 'x-amz-content-sha256' header does not match what was "
                          "computed."},
                         r);
  }
  if (limiter_ != nullptr &&
      !limiter_->Admit(limiter_->ScopeOf(r.bucket, r.key), RateLimiter::Clock::now())) {
    stats_->CountFault("throttled");
    return ErrorResponse({503, "SlowDown", "Please reduce your request rate."}, r);
  }
  FaultTicket ticket = faults_->Begin(r.op, req.method);
  if (int status = faults_->FailureStatus(ticket)) {
    faults_->Log(ticket, status == 503 ? "slowdown" : "internal", req, r.op, status, 0, 0);
    stats_->CountFault(status == 503 ? "slowdown" : "internal");
    return status == 503 ? ErrorResponse({503, "SlowDown", "Please reduce your request rate."}, r)
                         : ErrorResponse({500, "InternalError",
                                          "We encountered an internal error. Please try again."},
                                         r);
  }

  HttpResponse resp;
  const std::string& op = r.op;
  const std::string hostile = HostileKind(hostile_, r);
  if (!hostile.empty()) stats_->CountFault(hostile);
  if (auto replaced = hostile.empty() ? std::nullopt : HostileBefore(hostile, r))
    resp = std::move(*replaced);
  else if (op == "GetObject" || op == "HeadObject")
    resp = HandleGetObject(*store_, r);
  else if (op == "PutObject")
    resp = HandlePutObject(*store_, r);
  else if (op == "CopyObject")
    resp = HandleCopyObject(*store_, r);
  else if (op == "DeleteObject")
    resp = HandleDeleteObject(*store_, r);
  else if (op == "ListBuckets")
    resp = HandleListBuckets(*store_, r);
  else if (op == "CreateBucket")
    resp = HandleCreateBucket(*store_, r);
  else if (op == "DeleteBucket")
    resp = HandleDeleteBucket(*store_, r);
  else if (op == "HeadBucket")
    resp = HandleHeadBucket(*store_, r);
  else if (op == "GetBucketLocation")
    resp = HandleGetBucketLocation(*store_, r);
  else if (op == "ListObjectsV2")
    resp = HandleListObjects(*store_, r, true);
  else if (op == "ListObjects")
    resp = HandleListObjects(*store_, r, false);
  else if (op == "DeleteObjects")
    resp = HandleDeleteObjects(*store_, r);
  else if (op == "CreateMultipartUpload")
    resp = HandleCreateMultipartUpload(*store_, r);
  else if (op == "UploadPart")
    resp = HandleUploadPart(*store_, r);
  else if (op == "UploadPartCopy")
    resp = HandleUploadPartCopy(*store_, r);
  else if (op == "CompleteMultipartUpload")
    resp = HandleCompleteMultipartUpload(*store_, r);
  else if (op == "AbortMultipartUpload")
    resp = HandleAbortMultipartUpload(*store_, r);
  else if (op == "ListMultipartUploads")
    resp = HandleListMultipartUploads(*store_, r);
  else if (op == "ListParts")
    resp = HandleListParts(*store_, r);

  if (req.method == "GET") stats_->AddBytesSent(resp.BodyLength());
  if (req.method == "GET" && (resp.status == 200 || resp.status == 206)) {
    resp.fault = faults_->BodyFaultFor(ticket, resp.BodyLength());
    if (resp.fault.kind != BodyFault::Kind::kNone) {
      faults_->Log(ticket, FaultName(resp.fault.kind), req, r.op, resp.status, resp.fault.cut_at,
                   resp.BodyLength());
      stats_->CountFault(FaultName(resp.fault.kind));
    }
  }
  if (!hostile.empty()) HostileAfter(hostile, resp);
  if (resp.status >= 200 && resp.status < 300 && faults_->LosesReply(ticket)) {
    faults_->Log(ticket, "lost_reply", req, r.op, 500, 0, 0);
    stats_->CountFault("lost_reply");
    return ErrorResponse(
        {500, "InternalError", "We encountered an internal error. Please try again."}, r);
  }
  return resp;
}

}  // namespace s3sim
