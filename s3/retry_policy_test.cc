#include "s3/retry_policy.h"

#include <gtest/gtest.h>

#include "s3/http_transport.h"

namespace bucketfs::s3 {
namespace {

Error Http(int status, std::string code = "") {
  Error e = MakeError(EIO, std::move(code), "x");
  e.http_status = status;
  return e;
}

TEST(RetryPolicy, TransportErrors) {
  for (bool idem : {true, false}) {
    EXPECT_TRUE(IsRetryableError(MakeTransportError("ConnectFailed", ""), idem));
    EXPECT_FALSE(IsRetryableError(MakeTransportError("Aborted", ""), idem));
    EXPECT_FALSE(IsRetryableError(MakeTransportError("Shutdown", ""), idem));
  }
  for (const char* code : {"Reset", "Timeout", "Stalled", "Truncated", "TLS", "Transport"}) {
    EXPECT_TRUE(IsRetryableError(MakeTransportError(code, ""), true)) << code;
    EXPECT_FALSE(IsRetryableError(MakeTransportError(code, ""), false)) << code;
  }
  Error tls_config = MakeTransportError("TLS", "bad CA file");
  tls_config.retryable = false;
  EXPECT_FALSE(IsRetryableError(tls_config, true));
}

TEST(RetryPolicy, HttpStatusesAndS3Codes) {
  for (int s : {500, 502, 503, 504, 429}) {
    EXPECT_TRUE(IsRetryableError(Http(s), true)) << s;
    EXPECT_FALSE(IsRetryableError(Http(s), false)) << s;
  }
  for (int s : {400, 403, 404, 409, 412, 416, 501}) {
    EXPECT_FALSE(IsRetryableError(Http(s), true)) << s;
  }
  EXPECT_TRUE(IsRetryableError(Http(400, "RequestTimeout"), true));
  EXPECT_TRUE(IsRetryableError(Http(503, "SlowDown"), true));
  EXPECT_TRUE(IsRetryableError(Http(200, "InternalError"), true));
  EXPECT_FALSE(IsRetryableError(Http(400, "RequestTimeout"), false));
  EXPECT_FALSE(IsRetryableError(Http(404, "NoSuchKey"), true));
}

TEST(RetryPolicy, AttemptBudget) {
  RetryPolicy p({.max_attempts = 3});
  const Error e = Http(503);
  EXPECT_TRUE(p.ShouldRetry(e, true, 1));
  EXPECT_TRUE(p.ShouldRetry(e, true, 2));
  EXPECT_FALSE(p.ShouldRetry(e, true, 3));
  RetryPolicy once({.max_attempts = 1});
  EXPECT_FALSE(once.ShouldRetry(MakeTransportError("ConnectFailed", ""), true, 1));
}

TEST(RetryPolicy, BackoffCapGrowsExponentiallyToMax) {
  RetryOptions o{.max_attempts = 10,
                 .backoff_base = std::chrono::milliseconds(100),
                 .backoff_max = std::chrono::milliseconds(1000)};
  EXPECT_EQ(BackoffCap(o, 1).count(), 100);
  EXPECT_EQ(BackoffCap(o, 2).count(), 200);
  EXPECT_EQ(BackoffCap(o, 3).count(), 400);
  EXPECT_EQ(BackoffCap(o, 4).count(), 800);
  EXPECT_EQ(BackoffCap(o, 5).count(), 1000);
  EXPECT_EQ(BackoffCap(o, 1000).count(), 1000);  // no overflow
}

TEST(RetryPolicy, FullJitterCoversTheWindow) {
  RetryOptions o{.max_attempts = 10,
                 .backoff_base = std::chrono::milliseconds(100),
                 .backoff_max = std::chrono::milliseconds(1000)};
  EXPECT_EQ(BackoffDelay(o, 3, 0.0).count(), 0);
  EXPECT_EQ(BackoffDelay(o, 3, 0.5).count(), 200);
  EXPECT_EQ(BackoffDelay(o, 3, 0.999999).count(), 400);
  RetryPolicy p(o);
  int64_t lo = 1 << 30, hi = 0;
  for (int i = 0; i < 2000; ++i) {
    const int64_t d = p.NextDelay(4).count();
    ASSERT_GE(d, 0);
    ASSERT_LE(d, 800);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_LT(lo, 100);  // jitter really spreads over the window
  EXPECT_GT(hi, 700);
}

}  // namespace
}  // namespace bucketfs::s3
