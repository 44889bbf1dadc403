// S3Executor: one Operation per Execute, one AttemptHandler per HTTP attempt.
//
// Attempts of one operation run one after another (the next is submitted
// from the previous one's OnComplete) and the transport serializes the
// callbacks of one request, so Operation needs no lock: its fields are only
// touched by whichever callback of the current attempt is running. The
// transport hands requests between threads through its own queues, which
// orders those accesses.
//
// Body bytes go straight from the transport's chunk into the sink (or
// S3Response::body); the hot path is a bounds check, a virtual call and two
// additions, with no allocation and no lock.
#include "s3/s3_executor.h"

#include <algorithm>
#include <future>
#include <limits>
#include <utility>

#include "s3/http_header_values.h"
#include "s3/sigv4_signer.h"

namespace bucketfs::s3 {
namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;
constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

Error ProtocolError(std::string code, std::string message) {
  Error e = MakeError(EIO, std::move(code), std::move(message));
  e.retryable = false;
  return e;
}

}  // namespace

struct S3Executor::Operation {
  S3Request request;
  std::shared_ptr<BodySink> sink;
  S3Callback done;
  std::string payload_hash;  // computed once, reused by every attempt
  int attempts = 0;
  uint64_t delivered = 0;  // body bytes handed to the sink / body so far
  bool have_headers = false;
  S3Response response;            // status and headers of the first 2xx attempt
  std::string etag;               // of the first 2xx attempt, for If-Match on resume
  RequestPacer* pacer = nullptr;  // the bucket's, when pacing
  std::chrono::steady_clock::time_point sent_at;  // of the current attempt, for the pacer

  // A GET whose partial body can be continued with a Range request.
  bool CanResume() const { return request.method == "GET" && (request.range || sink); }

  void Finish(Result<S3Response> result) {
    S3Callback cb = std::move(done);
    done = nullptr;
    if (cb) cb(std::move(result));
  }
};

class S3Executor::AttemptHandler : public HttpResponseHandler {
 public:
  // `delay`: the backoff before the transport sends it, left out of its latency.
  AttemptHandler(S3Executor& exec, std::shared_ptr<Operation> op, bool ranged, uint64_t asked_first,
                 uint64_t asked_last, std::chrono::milliseconds delay)
      : exec_(exec),
        op_(std::move(op)),
        ranged_(ranged),
        asked_first_(asked_first),
        asked_last_(asked_last),
        started_(exec.observer_ != nullptr ? std::chrono::steady_clock::now() + delay
                                           : std::chrono::steady_clock::time_point{}) {}

  void OnHeaders(int status, const HttpHeaders& headers) override {
    status_ = status;
    success_ = status >= 200 && status < 300;
    if (!success_) {
      headers_ = headers;
      return;
    }
    if (ranged_) CheckRange(status, headers);
    Operation& op = *op_;
    if (!op.have_headers) {
      op.have_headers = true;
      op.response.status = status;
      op.response.headers = headers;
      if (const std::string* etag = FindHeader(headers, "ETag")) op.etag = *etag;
    }
    if (!op.sink && limit_ != kNoLimit && op.response.body.empty()) {
      op.response.body.reserve(std::min<uint64_t>(limit_, 64ull << 20));
    }
  }

  bool OnBody(std::span<const std::byte> chunk) override {
    if (!fail_.ok()) return false;
    if (!success_) {
      const size_t room = kMaxErrorBody - std::min(kMaxErrorBody, error_body_.size());
      error_body_.append(reinterpret_cast<const char*>(chunk.data()), std::min(room, chunk.size()));
      return true;
    }
    Operation& op = *op_;
    if (chunk.size() > limit_ - got_) {
      fail_ =
          ProtocolError("BadContentLength", "server sent more bytes than the range it announced");
      return false;
    }
    if (op.sink) {
      Status s = op.sink->Write(op.delivered, chunk);
      if (!s.ok()) {
        fail_ = std::move(s);
        return false;
      }
    } else {
      op.response.body.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    }
    op.delivered += chunk.size();
    got_ += chunk.size();
    return true;
  }

  void OnComplete(Status transport_status) override {
    std::shared_ptr<Operation> op = std::move(op_);
    if (op->pacer != nullptr && transport_status.ok() && success_ &&
        op->pacer->OnSuccess(std::chrono::steady_clock::now()) && exec_.observer_ != nullptr) {
      exec_.observer_->OnPaceRate(op->pacer->rate());
    }
    if (exec_.observer_ != nullptr) {
      exec_.observer_->OnAttemptEnd(op->request.op, status_,
                                    std::chrono::steady_clock::now() - started_,
                                    got_ + error_body_.size(), op->request.body.size());
    }
    if (!fail_.ok()) {
      exec_.OnAttemptFailed(op, std::move(fail_.error()));
    } else if (!transport_status.ok()) {
      exec_.OnAttemptFailed(op, std::move(transport_status.error()));
    } else if (!success_) {
      exec_.OnAttemptFailed(op, ParseS3Error(status_, error_body_, headers_));
    } else if (limit_ != kNoLimit && got_ != limit_) {
      exec_.OnAttemptFailed(op, MakeTransportError(transport_code::kTruncated,
                                                   "body ended after " + std::to_string(got_) +
                                                       " of " + std::to_string(limit_) + " bytes"));
    } else {
      op->response.body_bytes = op->delivered;
      op->response.attempts = op->attempts;
      op->Finish(std::move(op->response));
    }
  }

 private:
  // A Range was sent: the answer must be that range (or, for a whole-object
  // range from 0, a 200 that fits in it), else the bytes would land at the
  // wrong offsets.
  void CheckRange(int status, const HttpHeaders& headers) {
    const std::string* cr = FindHeader(headers, "Content-Range");
    if (status == 200 && asked_first_ == 0 && op_->delivered == 0) {
      const std::string* cl = FindHeader(headers, "Content-Length");
      const std::optional<uint64_t> len = cl ? ParseHeaderNumber(*cl) : std::nullopt;
      if (len && *len <= asked_last_ - asked_first_ + 1) {
        limit_ = *len;
        return;
      }
      fail_ = ProtocolError("RangeIgnored", "server answered 200 with more than the asked range");
      return;
    }
    const std::optional<ContentRange> range =
        status == 206 && cr ? ParseContentRange(*cr) : std::nullopt;
    if (!range) {
      fail_ = ProtocolError("BadContentRange", "asked bytes " + std::to_string(asked_first_) +
                                                   "-, got HTTP " + std::to_string(status) +
                                                   " Content-Range '" + (cr ? *cr : "") + "'");
      return;
    }
    const auto [first, last, total] = *range;
    const bool ends_object = total && last + 1 == *total;
    const bool full = last == asked_last_ || (asked_last_ == kNoLimit && ends_object);
    const bool short_object = ends_object && last < asked_last_;
    if (first != asked_first_ || last > asked_last_ || !(full || short_object)) {
      fail_ = ProtocolError("BadContentRange", "asked bytes " + std::to_string(asked_first_) + "-" +
                                                   std::to_string(asked_last_) + ", server sent '" +
                                                   *cr + "'");
      return;
    }
    limit_ = last - first + 1;
  }

  S3Executor& exec_;
  std::shared_ptr<Operation> op_;
  const bool ranged_;
  const uint64_t asked_first_;
  const uint64_t asked_last_;                            // kNoLimit for "bytes=a-"
  const std::chrono::steady_clock::time_point started_;  // only read with an observer
  int status_ = 0;
  bool success_ = false;
  uint64_t limit_ = kNoLimit;  // bytes this attempt may deliver
  uint64_t got_ = 0;
  Status fail_;  // set by this handler: never retried
  HttpHeaders headers_;
  std::string error_body_;
};

S3Executor::S3Executor(HttpTransport& transport, Endpoint endpoint,
                       std::shared_ptr<CredentialsProvider> credentials, ClientConfig config,
                       RequestObserver* observer)
    : transport_(transport),
      endpoint_(std::move(endpoint)),
      credentials_(std::move(credentials)),
      config_(std::move(config)),
      retry_(RetryOptions{config_.max_attempts, config_.backoff_base, config_.backoff_max}),
      observer_(observer),
      pacing_(config_.adaptive_rate ? std::make_unique<RequestPacing>() : nullptr),
      dispatcher_(config_.adaptive_rate ? std::make_unique<PacedDispatcher>() : nullptr) {}

void S3Executor::Shutdown() {
  if (dispatcher_ != nullptr) dispatcher_->Stop();
}

void S3Executor::Execute(S3Request request, std::shared_ptr<BodySink> sink, S3Callback done) {
  auto op = std::make_shared<Operation>();
  op->request = std::move(request);
  op->sink = std::move(sink);
  op->done = std::move(done);
  const auto body = op->request.body;
  if (body.empty()) {
    op->payload_hash = kEmptyPayloadSha256;
  } else if (body.size() <= config_.sign_payload_max_bytes) {
    op->payload_hash = Sha256Hex(body);
  } else {
    op->payload_hash = kUnsignedPayload;
  }
  if (op->request.range && op->request.range->length == 0) {
    op->Finish(MakeError(EINVAL, "InvalidArgument", "empty byte range"));
    return;
  }
  if (pacing_ != nullptr) op->pacer = &pacing_->For(op->request.bucket);
  StartAttempt(op, std::chrono::milliseconds(0));
}

Result<S3Response> S3Executor::ExecuteSync(S3Request request, std::shared_ptr<BodySink> sink) {
  std::promise<Result<S3Response>> promise;
  auto future = promise.get_future();
  Execute(std::move(request), std::move(sink),
          [&promise](Result<S3Response> r) { promise.set_value(std::move(r)); });
  return future.get();
}

void S3Executor::StartAttempt(const std::shared_ptr<Operation>& op,
                              std::chrono::milliseconds delay) {
  const S3Request& req = op->request;
  ++op->attempts;
  Credentials creds;
  if (credentials_) {
    Result<Credentials> c = credentials_->GetCredentials();
    if (!c.ok()) {
      op->Finish(std::move(c.error()));
      return;
    }
    creds = std::move(c.value());
  } else {
    creds.anonymous = true;
  }

  HttpRequest http;
  http.method = req.method;
  http.run_on_caller = req.run_on_caller;
  const std::string path = endpoint_.PathFor(req.bucket, req.key);
  const std::string query = CanonicalQueryString(req.query);
  http.url = endpoint_.Origin(req.bucket) + path;
  if (!query.empty()) http.url += "?" + query;
  http.headers.reserve(req.headers.size() + 8);
  http.headers.emplace_back("Host", endpoint_.HostFor(req.bucket));
  http.headers.insert(http.headers.end(), req.headers.begin(), req.headers.end());

  // Range: the caller's, moved past what earlier attempts delivered.
  bool ranged = false;
  uint64_t first = 0, last = kNoLimit;
  if (req.range) {
    ranged = true;
    first = req.range->offset + op->delivered;
    last = req.range->offset + req.range->length - 1;
  } else if (op->delivered > 0) {
    ranged = true;
    first = op->delivered;
  }
  if (ranged) {
    std::string value = "bytes=" + std::to_string(first) + "-";
    if (last != kNoLimit) value += std::to_string(last);
    http.headers.emplace_back("Range", std::move(value));
    // A resumed body must come from the same object version.
    if (op->delivered > 0 && !op->etag.empty() && !FindHeader(req.headers, "If-Match")) {
      http.headers.emplace_back("If-Match", op->etag);
    }
  }

  if (!creds.anonymous) {
    SigningRequest sr;
    sr.method = req.method;
    sr.canonical_uri = path;
    sr.query = req.query;
    sr.headers = http.headers;
    sr.payload_hash = op->payload_hash;
    SigningContext ctx;
    ctx.region = config_.region;
    ctx.now = std::chrono::system_clock::now();
    SignedRequestParts signed_parts = SignV4(sr, creds, ctx);
    for (auto& h : signed_parts.headers_to_add) http.headers.push_back(std::move(h));
  }
  http.body = req.body;
  http.low_speed_time =
      std::max(config_.low_speed_time, req.min_low_speed_time.value_or(std::chrono::seconds(0)));
  http.low_speed_bytes_per_sec = config_.low_speed_bytes_per_sec;
  const auto now = std::chrono::steady_clock::now();
  if (op->pacer != nullptr && op->pacer->rate() > 0) {
    // Paced: the attempt starts when its slot comes (or at once, after its
    // backoff, when the dispatcher has stopped).
    const auto earliest = now + delay;
    http.run_on_caller = false;  // the transfer must not hold up the dispatcher's thread
    PacedDispatcher::Run run = [this, op, http = std::move(http), ranged, first, last, now,
                                earliest](bool go,
                                          PacedDispatcher::Clock::time_point sent) mutable {
      if (!go) {
        op->Finish(MakeTransportError(transport_code::kShutdown, "client shut down"));
        return;
      }
      const auto held = sent - std::max(now, earliest);
      if (observer_ != nullptr && held > held.zero()) observer_->OnPaced(held);
      const auto wait = std::max(std::chrono::milliseconds(0),
                                 std::chrono::ceil<std::chrono::milliseconds>(earliest - sent));
      op->sent_at = sent + wait;
      if (observer_ != nullptr) observer_->OnAttemptStart(op->request.op);
      transport_.Submit(std::move(http),
                        std::make_shared<AttemptHandler>(*this, op, ranged, first, last, wait),
                        wait);
    };
    if (!dispatcher_->Enqueue(*op->pacer, earliest, run)) run(true, now);
    return;
  }
  if (op->pacer != nullptr) op->pacer->Take(now, now);
  op->sent_at = now + delay;
  if (observer_ != nullptr) observer_->OnAttemptStart(req.op);
  transport_.Submit(std::move(http),
                    std::make_shared<AttemptHandler>(*this, op, ranged, first, last, delay), delay);
}

void S3Executor::OnAttemptFailed(const std::shared_ptr<Operation>& op, Error error) {
  if (IsThrottleAnswer(error.http_status, error.code)) {
    if (observer_ != nullptr) observer_->OnThrottled(op->request.op);
    if (op->pacer != nullptr &&
        op->pacer->OnThrottled(op->sent_at, std::chrono::steady_clock::now()) &&
        observer_ != nullptr) {
      observer_->OnPaceRate(op->pacer->rate());
    }
  }
  const auto& range = op->request.range;
  if (range && op->have_headers && op->delivered == range->length && error.http_status == 0 &&
      error.retryable) {
    // Every asked byte arrived before the connection failed: done.
    op->response.body_bytes = op->delivered;
    op->response.attempts = op->attempts;
    op->Finish(std::move(op->response));
    return;
  }
  bool retry = retry_.ShouldRetry(error, op->request.idempotent, op->attempts);
  if (retry && op->delivered > 0 && !op->CanResume()) {
    if (op->sink) {
      retry = false;  // bytes already in the caller's sink cannot be taken back
    } else {
      op->delivered = 0;  // a small collected body: start over
      op->response = S3Response{};
      op->have_headers = false;
      op->etag.clear();
    }
  }
  if (retry) {
    if (observer_ != nullptr) observer_->OnRetry(op->request.op);
    StartAttempt(op, retry_.NextDelay(op->attempts));
    return;
  }
  if (op->attempts > 1) {
    error.message += " (after " + std::to_string(op->attempts) + " attempts)";
  }
  op->Finish(std::move(error));
}

}  // namespace bucketfs::s3
