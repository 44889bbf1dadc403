#include "tests/s3sim/rate_limiter.h"

#include <algorithm>

namespace s3sim {

std::string RateLimiter::ScopeOf(std::string_view bucket, std::string_view key) const {
  std::string scope(bucket);
  if (config_.per_prefix) {
    scope += '/';
    scope += key.substr(0, key.find('/'));
  }
  return scope;
}

double RateLimiter::Burst() const {
  return config_.burst > 0 ? config_.burst : std::max(1.0, config_.rate / 10);
}

bool RateLimiter::Admit(const std::string& scope, Clock::time_point now) {
  if (!enabled()) return true;
  bucketfs::MutexLock lock(mu_);
  auto [it, inserted] = buckets_.try_emplace(scope);
  Bucket& b = it->second;
  if (inserted) {
    b.tokens = Burst();
  } else if (now > b.refilled) {
    const double elapsed = std::chrono::duration<double>(now - b.refilled).count();
    b.tokens = std::min(Burst(), b.tokens + elapsed * config_.rate);
  }
  b.refilled = std::max(b.refilled, now);
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

}  // namespace s3sim
