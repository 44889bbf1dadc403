// FakeHttpTransport: a table-driven HttpTransport for tests.
//
// Rules map "METHOD target" to responses. A target starting with '/' is
// matched as a prefix of the request's path (with its query string); any
// other target as a prefix of the whole URL. The longest matching target
// wins (ties: the rule added first). Each rule holds a script: responses are
// used in the order they were added and the last one repeats forever, so
//   fake.AddResponse("GET", "/b/k", FakeResponse{503});
//   fake.AddResponse("GET", "/b/k", FakeResponse{200, {}, "data"});
// answers 503 once, then 200. A rule may instead compute its answer from the
// request (AddResponder), e.g. to honour Range headers (RangedObject).
// Unmatched requests get 501 NotImplemented (not retryable), so a missing
// rule shows up as a clear failure.
//
// Faults: a response may end in a transport error instead of completing,
// before the headers (fail_after_bytes < 0: nothing was received) or after
// the headers and `fail_after_bytes` body bytes (mid-body reset, truncation).
//
// Handlers run on one worker thread (default; delayed Submits are held for
// delay * delay_scale, 0 by default so tests stay fast), or inline on the
// submitting thread (inline_mode). Every request is recorded (body copied)
// with the delay it was submitted with.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "s3/http_transport.h"

namespace bucketfs::s3 {

struct FakeResponse {
  int status = 200;
  HttpHeaders headers;  // Content-Length is added from body when absent
  std::string body;
  // Non-empty: the exchange ends with MakeTransportError(error_code) instead
  // of success, after fail_after_bytes body bytes (< 0: before the headers).
  std::string error_code;
  int64_t fail_after_bytes = -1;
};

struct RecordedRequest {
  std::string method;
  std::string url;
  HttpHeaders headers;
  std::string body;
  std::chrono::milliseconds delay{0};
  std::chrono::seconds low_speed_time{0};  // the stall limit the request was sent with
  bool run_on_caller = false;
  // Case-insensitive header lookup; "" when absent.
  std::string Header(std::string_view name) const;
};

struct FakeTransportOptions {
  bool inline_mode = false;       // run handlers on the submitting thread
  size_t chunk_size = 16 * 1024;  // OnBody chunk size
  double delay_scale = 0.0;       // real delay = requested delay * scale
};

class FakeHttpTransport : public HttpTransport {
 public:
  using Responder = std::function<FakeResponse(const RecordedRequest&)>;

  explicit FakeHttpTransport(FakeTransportOptions options = {});
  ~FakeHttpTransport() override;  // drains queued requests, then joins

  void AddResponse(std::string method, std::string target, FakeResponse response);
  void AddResponder(std::string method, std::string target, Responder responder);
  void Clear();  // drops all rules and recorded requests

  std::vector<RecordedRequest> requests() const;
  size_t request_count() const;

  void Submit(HttpRequest request, std::shared_ptr<HttpResponseHandler> handler,
              std::chrono::milliseconds delay) override;

  // Serves `object` like S3 does for GET/HEAD: a "Range: bytes=a-b" or
  // "bytes=a-" header gives 206 with Content-Range, else 200; 416 when the
  // range starts past the end; "If-Match" not equal to `etag` gives 412.
  static FakeResponse RangedObject(const RecordedRequest& request, std::string_view object,
                                   const std::string& etag = "\"fake-etag\"");

 private:
  struct Rule {
    std::string method;
    std::string target;
    std::deque<FakeResponse> script;  // used front first; the last one sticks
    Responder responder;
  };
  struct Job {
    RecordedRequest request;
    std::shared_ptr<HttpResponseHandler> handler;
    std::chrono::steady_clock::time_point due;
  };

  FakeResponse Answer(const RecordedRequest& request) EXCLUDES(mu_);
  void Run(const Job& job) EXCLUDES(mu_);
  void WorkerLoop() EXCLUDES(mu_);

  const FakeTransportOptions options_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<Rule> rules_ GUARDED_BY(mu_);
  std::vector<RecordedRequest> recorded_ GUARDED_BY(mu_);
  std::deque<Job> queue_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace bucketfs::s3
