// The S3 application on top of the HTTP server: resolves bucket and key
// (path-style, or virtual-hosted "bucket.localhost"), verifies SigV4 before
// the body is read, checks the payload hash once it is, counts the request,
// draws its faults, dispatches to the operation handler and stamps the common
// headers (x-amz-request-id, x-amz-id-2). Admin endpoints under /__s3sim/
// (stats, reset-stats) bypass auth, stats and faults.
#ifndef TESTS_S3SIM_S3_APP_H_
#define TESTS_S3SIM_S3_APP_H_

#include <atomic>
#include <cstdint>
#include <utility>

#include "tests/s3sim/faults.h"
#include "tests/s3sim/handlers.h"
#include "tests/s3sim/hostile.h"
#include "tests/s3sim/http_server.h"
#include "tests/s3sim/rate_limiter.h"
#include "tests/s3sim/sigv4_verifier.h"
#include "tests/s3sim/stats.h"
#include "tests/s3sim/store.h"

namespace s3sim {

class S3App : public HttpApp {
 public:
  S3App(AuthConfig auth, Store* store, FaultInjector* faults, Stats* stats);
  // Requests beyond `limiter`'s rate get 503 SlowDown (counted as the fault
  // "throttled"); it must outlive the app. Set before serving.
  void SetRateLimiter(RateLimiter* limiter) { limiter_ = limiter; }
  // Before serving: the misbehaviours aimed at some keys (hostile.h).
  void SetHostile(HostileConfig hostile) { hostile_ = std::move(hostile); }

  std::optional<HttpResponse> Precheck(const HttpRequest& req) override;
  HttpResponse Handle(HttpRequest& req) override;
  HttpResponse ProtocolError(int status, const std::string& code,
                             const std::string& message) override;
  void Sent(const HttpResponse& resp) override;

 private:
  // Fills bucket, key and query; returns an error for malformed targets.
  std::optional<S3Error> Resolve(HttpRequest& req, S3Request* out);
  HttpResponse Dispatch(S3Request& r);
  HttpResponse HandleAdmin(const HttpRequest& req);
  std::string NextRequestId();
  void Stamp(HttpResponse& resp, const std::string& request_id);

  const AuthConfig auth_;
  Store* const store_;
  FaultInjector* const faults_;
  Stats* const stats_;
  RateLimiter* limiter_ = nullptr;
  std::atomic<uint64_t> request_counter_{0};
  HostileConfig hostile_;
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_S3_APP_H_
