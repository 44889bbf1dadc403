// RetryPolicy: which failures are retried and how long to wait before the
// next attempt. Pure and deterministic given its random input, so tests
// check the classification table and the backoff bounds directly.
//
// Classification (Error::code / Error::http_status):
//   - ConnectFailed: the request never reached the server, so it is retried
//     even when the request is not idempotent.
//   - other transport failures (Reset, Timeout, Stalled, Truncated, TLS
//     handshake, generic Transport) whose Error::retryable is set: retried
//     only for idempotent requests. Aborted and Shutdown never.
//   - HTTP 500, 502, 503, 504, 429 and the S3 codes SlowDown, RequestTimeout,
//     InternalError: retried only for idempotent requests.
// Backoff before retry n (n = 1 for the first retry) is full jitter:
// uniform in [0, min(backoff_max, backoff_base * 2^(n-1))].
#pragma once

#include <chrono>

#include "s3/result.h"

namespace bucketfs::s3 {

struct RetryOptions {
  int max_attempts = 6;  // includes the first attempt
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_max{20000};
};

// True when `error` is worth another attempt (ignores the attempt budget).
bool IsRetryableError(const Error& error, bool idempotent);

// The cap of the jitter window before retry `retry` (1-based).
std::chrono::milliseconds BackoffCap(const RetryOptions& options, int retry);

// Full jitter: `unit_random` in [0, 1) picks a point in [0, BackoffCap].
std::chrono::milliseconds BackoffDelay(const RetryOptions& options, int retry, double unit_random);

class RetryPolicy {
 public:
  explicit RetryPolicy(RetryOptions options) : options_(options) {}

  // After `attempts_made` attempts ended in `error`: retry?
  bool ShouldRetry(const Error& error, bool idempotent, int attempts_made) const {
    return attempts_made < options_.max_attempts && IsRetryableError(error, idempotent);
  }
  // Delay before the next attempt; thread-safe (a per-thread generator).
  std::chrono::milliseconds NextDelay(int attempts_made) const;

  const RetryOptions& options() const { return options_; }

 private:
  RetryOptions options_;
};

}  // namespace bucketfs::s3
