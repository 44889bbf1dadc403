// RateLimiter: the request-rate limit of a partitioned store (S3 answers
// 503 SlowDown to a prefix that gets more requests than it allows).
//
// One token bucket per scope, a bucket or a bucket's first key segment
// ("prefix"): tokens refill at `rate` per second up to `burst`; a request
// takes one or is refused. A refused request takes no token, as a store
// that rejects it does no work for it. Time is passed in, so the unit test
// needs no clock.
#ifndef TESTS_S3SIM_RATE_LIMITER_H_
#define TESTS_S3SIM_RATE_LIMITER_H_

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "base/mutex.h"

namespace s3sim {

struct RateLimitConfig {
  double rate = 0;   // requests per second per scope; 0: no limit
  double burst = 0;  // most tokens a scope holds; 0: max(1, rate / 10)
  bool per_prefix = false;
};

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimiter(RateLimitConfig config) : config_(config) {}

  bool enabled() const { return config_.rate > 0; }
  // The scope a request counts against: "bucket" or "bucket/segment".
  std::string ScopeOf(std::string_view bucket, std::string_view key) const;
  // Takes a token for `scope` at `now`; false: the request is refused.
  bool Admit(const std::string& scope, Clock::time_point now);

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled;
  };
  double Burst() const;

  const RateLimitConfig config_;
  bucketfs::Mutex mu_;
  std::map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_RATE_LIMITER_H_
