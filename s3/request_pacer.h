// RequestPacer: how fast requests to one bucket may start, learned from the
// store's throttling (HTTP 503 SlowDown, 429).
//
// Object stores throttle a prefix by its request rate, not by the requests
// in flight, so the pacer controls the rate: a request reserves the next
// start slot (1/rate apart) and the executor submits it with that delay.
// Until the first throttled answer nothing is paced (rate 0), so a store
// that never throttles sees no change. Then:
//   - decrease: on a throttled answer to a request sent after the last
//     decrease (once per round trip, as TCP does), the rate becomes
//     kDecrease times the lower of the current rate and the rate of
//     successful answers over the last second (or since the first one),
//     which is what the store admits when it throttles;
//   - increase: while requests wait for their slot (the rate is what limits
//     them), it grows by max(1, kIncreaseShare of itself) per second;
//   - release: after kReleaseAfter without throttling, pacing stops.
// Retries of throttled requests keep their backoff: a slot is never before
// the time the caller asked for. Time is passed in, so tests need no clock.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"

namespace bucketfs::s3 {

class RequestPacer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kDecrease = 0.85;
  static constexpr double kIncreaseShare = 0.1;
  static constexpr double kMinRate = 1;  // requests per second
  static constexpr std::chrono::seconds kReleaseAfter{30};

  // The start time of a request that may go at `earliest` (>= now); the
  // slot is taken.
  Clock::time_point Reserve(Clock::time_point now, Clock::time_point earliest) EXCLUDES(mu_);
  // A request started at `sent` got a throttled answer at `now`. Returns
  // true when that lowered the rate.
  bool OnThrottled(Clock::time_point sent, Clock::time_point now) EXCLUDES(mu_);
  // A request got a successful answer at `now`. Returns true when that
  // changed the rate.
  bool OnSuccess(Clock::time_point now) EXCLUDES(mu_);

  // Requests per second; 0: not paced.
  double rate() const EXCLUDES(mu_);

 private:
  // Successful answers per 100 ms slot over the last second.
  static constexpr int kSlots = 10;
  static constexpr std::chrono::milliseconds kSlotWidth{100};
  void CountSuccess(Clock::time_point now) REQUIRES(mu_);
  double RecentSuccessRate(Clock::time_point now) REQUIRES(mu_);
  void MaybeRelease(Clock::time_point now) REQUIRES(mu_);

  mutable Mutex mu_;
  double rate_ GUARDED_BY(mu_) = 0;
  Clock::time_point next_slot_ GUARDED_BY(mu_);
  Clock::time_point last_decrease_ GUARDED_BY(mu_);
  Clock::time_point last_throttle_ GUARDED_BY(mu_);
  Clock::time_point last_waited_ GUARDED_BY(mu_);  // a reservation had to wait
  Clock::time_point last_increase_ GUARDED_BY(mu_);
  std::array<uint32_t, kSlots> successes_ GUARDED_BY(mu_) = {};
  bool any_success_ GUARDED_BY(mu_) = false;
  Clock::time_point first_success_ GUARDED_BY(mu_);
  int64_t newest_slot_ GUARDED_BY(mu_) = 0;  // index (time / kSlotWidth) of successes_' newest
};

// One RequestPacer per bucket, made on first use; the pacers live as long
// as this object.
class RequestPacing {
 public:
  RequestPacer& For(const std::string& bucket) EXCLUDES(mu_);

 private:
  Mutex mu_;
  std::map<std::string, std::unique_ptr<RequestPacer>> pacers_ GUARDED_BY(mu_);
};

// True for answers that mean "too many requests": 503, 429, SlowDown.
bool IsThrottleAnswer(int http_status, std::string_view code);

}  // namespace bucketfs::s3
