// S3Executor: turns one S3Request into signed HTTP requests on the
// transport, with retries, and delivers one Result.
//
// Per attempt: build the URL from the Endpoint, sign (SigV4, or nothing for
// anonymous credentials), submit. A 2xx body streams into the caller's
// BodySink when one is given (no copy beyond the sink's own), otherwise it
// is collected into S3Response::body (for XML answers, which are small).
// Non-2xx bodies are collected (capped) and parsed by ParseS3Error.
//
// Retries (RetryPolicy): 5xx, 429, 503 SlowDown, RequestTimeout, connection
// failures, stalls and bodies cut short are retried with exponential backoff
// and full jitter, up to max_attempts, scheduled through the transport's
// delayed Submit (no thread sleeps). A request with idempotent=false is
// retried only when it provably never reached the server (connect failure).
// A GET with a range that fails mid-body resumes from the first byte not yet
// received: the sink sees each byte offset exactly once, in order.
// When the budget is spent the caller gets the last error, never a short body.
//
// Pacing (config.adaptive_rate): once the store throttles, every attempt to
// that bucket (reads, writes and listings alike) waits in the
// PacedDispatcher for a start slot of its RequestPacer; a retry's backoff
// delay is the earliest its slot may be. Before that, attempts go straight
// to the transport.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "s3/client_config.h"
#include "s3/credentials.h"
#include "s3/http_transport.h"
#include "s3/paced_dispatcher.h"
#include "s3/request_observer.h"
#include "s3/request_pacer.h"
#include "s3/result.h"
#include "s3/retry_policy.h"

namespace bucketfs::s3 {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;  // > 0
};

struct S3Request {
  std::string method;      // GET HEAD PUT POST DELETE
  S3Op op = S3Op::kOther;  // what the request does, for the RequestObserver
  std::string bucket;      // "" for ListBuckets
  std::string key;         // not encoded; "" for bucket-level requests
  std::vector<std::pair<std::string, std::string>> query;  // not encoded
  HttpHeaders headers;  // extra headers (Content-Type, If-Match, x-amz-copy-source, ...)
  std::span<const std::byte> body;  // caller keeps it alive until done
  bool idempotent = true;
  // GET only: sets "Range: bytes=a-b" and enables resume after mid-body failures.
  std::optional<ByteRange> range;
  // Overrides ClientConfig::low_speed_time for an operation the server may
  // work on for minutes before it answers (CompleteMultipartUpload).
  std::optional<std::chrono::seconds> min_low_speed_time;
  // The caller waits for the result anyway: attempts without a backoff
  // delay may run on its thread (HttpRequest::run_on_caller), so `done` may
  // run before Execute returns.
  bool run_on_caller = false;
};

struct S3Response {
  int status = 0;
  HttpHeaders headers;
  std::string body;         // only when no sink was given
  uint64_t body_bytes = 0;  // bytes delivered (to sink or body) in total
  int attempts = 0;
};

// Receives 2xx body bytes. `offset` counts from the first byte of the
// response body of the first attempt (for ranged GETs: from range.offset).
// So offset 0 is the byte at range.offset; offsets arrive in increasing
// order, each exactly once, even across resumed attempts.
class BodySink {
 public:
  virtual ~BodySink() = default;
  // Returning an error aborts the request with that error (not retried).
  virtual Status Write(uint64_t offset, std::span<const std::byte> data) = 0;
};

using S3Callback = std::function<void(Result<S3Response>)>;

class S3Executor {
 public:
  // `observer` (may be null) hears of every attempt; it must outlive the executor.
  S3Executor(HttpTransport& transport, Endpoint endpoint,
             std::shared_ptr<CredentialsProvider> credentials, ClientConfig config,
             RequestObserver* observer = nullptr);

  // Runs the request asynchronously; `done` runs exactly once, on a transport
  // thread. REQUIRES: `done` does not block for long.
  // REQUIRES: the executor outlives every operation it started (destroy the
  // transport first: it completes whatever is pending with "Shutdown").
  void Execute(S3Request request, std::shared_ptr<BodySink> sink, S3Callback done);
  // Blocks the calling thread until done. REQUIRES: not called on a transport thread.
  Result<S3Response> ExecuteSync(S3Request request, std::shared_ptr<BodySink> sink = nullptr);
  // Ends the attempts waiting for a pacer slot with "Shutdown"; later ones
  // go to the transport at once. Call before destroying the transport.
  void Shutdown();

  const Endpoint& endpoint() const { return endpoint_; }
  const ClientConfig& config() const { return config_; }

 private:
  struct Operation;      // one Execute call across all its attempts
  class AttemptHandler;  // receives the response of one attempt

  // Signs and submits the next attempt of `op` after `delay`.
  void StartAttempt(const std::shared_ptr<Operation>& op, std::chrono::milliseconds delay);
  // An attempt failed: schedule another (resuming a partial body) or finish.
  void OnAttemptFailed(const std::shared_ptr<Operation>& op, Error error);

  HttpTransport& transport_;
  Endpoint endpoint_;
  std::shared_ptr<CredentialsProvider> credentials_;
  ClientConfig config_;
  RetryPolicy retry_;
  RequestObserver* const observer_;
  std::unique_ptr<RequestPacing> pacing_;  // null: no pacing
  // Last: stopped first, while the pacers and everything its attempts use live.
  std::unique_ptr<PacedDispatcher> dispatcher_;  // null: no pacing
};

// Parses an S3 error response (XML <Error><Code>..<Message>..<RequestId>..)
// into an Error with errno from the one mapping table (ErrnoForS3Code).
// Tolerates empty bodies, HTML pages and unknown elements: the HTTP status
// then decides (404 -> ENOENT, 403 -> EACCES, ...). Never throws.
Error ParseS3Error(int http_status, std::string_view body, const HttpHeaders& headers);

// The one table: S3 error code (and HTTP status when the code is unknown) -> errno.
int ErrnoForS3Code(std::string_view code, int http_status);

}  // namespace bucketfs::s3
