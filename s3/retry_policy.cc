#include "s3/retry_policy.h"

#include <algorithm>
#include <random>
#include <string_view>

#include "s3/http_transport.h"

namespace bucketfs::s3 {

bool IsRetryableError(const Error& error, bool idempotent) {
  namespace tc = transport_code;
  if (error.http_status == 0) {  // no HTTP response: a transport failure
    if (error.code == tc::kConnectFailed) return true;
    if (error.code == tc::kAborted || error.code == tc::kShutdown) return false;
    return idempotent && error.retryable;
  }
  if (!idempotent) return false;
  switch (error.http_status) {
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    default:
      break;
  }
  return error.code == "SlowDown" || error.code == "RequestTimeout" ||
         error.code == "InternalError";
}

std::chrono::milliseconds BackoffCap(const RetryOptions& options, int retry) {
  // base * 2^(retry-1), saturating at backoff_max without overflowing.
  const int shift = std::clamp(retry - 1, 0, 40);
  const long double cap = static_cast<long double>(options.backoff_base.count()) *
                          static_cast<long double>(1ULL << shift);
  const auto max = static_cast<long double>(options.backoff_max.count());
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(cap, max)));
}

std::chrono::milliseconds BackoffDelay(const RetryOptions& options, int retry, double unit_random) {
  const auto cap = BackoffCap(options, retry).count();
  const double u = std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds(
      std::min<int64_t>(cap, static_cast<int64_t>(u * static_cast<double>(cap + 1))));
}

std::chrono::milliseconds RetryPolicy::NextDelay(int attempts_made) const {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  return BackoffDelay(options_, attempts_made, unit(rng));
}

}  // namespace bucketfs::s3
