// RequestPacer: how fast requests to one bucket may start, learned from the
// store's throttling (HTTP 503 SlowDown, 429).
//
// Object stores throttle a prefix by its request rate, not by the requests
// in flight, so the pacer controls the rate: requests start in slots 1/rate
// apart, each taken when it comes (PacedDispatcher holds them until then),
// so a new rate applies to every request still waiting.
// Until the first throttled answer nothing is paced (rate 0), so a store
// that never throttles sees no change. Then:
//   - decrease: on a throttled answer to a request sent after the last
//     decrease (once per round trip, as TCP does), the rate becomes
//     kDecrease times the rate the store is judged to admit. At the first
//     throttle, and at the end of a probe, that is the rate of successful
//     answers while the bucket was busy (the last half second, or since
//     requests resumed after an idle spell, which would otherwise read as a
//     slow store), capped by the current rate. While paced, the current
//     rate was admitted a moment ago and is only a little too high: the
//     successes lower it by kDecrease at most (fewer may only mean there was
//     less to send). With less than kMeasureSpan of busy time the current
//     rate is all there is; a first throttle then takes the successes as a
//     guess and probes, doubling the rate every kDoubling until the next
//     throttle. The next slot is one interval after the throttled answer;
//   - increase: when requests waited for their slot since the last success
//     and at least kBinding of the slots were used (the rate is what limits
//     them, not a burst), it climbs back to the admitted rate quickly
//     (kRecovery of the gap per second) and beyond it slowly (max(1,
//     kIncreaseShare of itself) per second), probing whether the store
//     admits more;
//   - release: after kReleaseAfter without throttling, pacing stops.
// Time is passed in, so tests need no clock.
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
  static constexpr double kDecrease = 0.9;
  static constexpr double kIncreaseShare = 0.1;
  // Raised only while at least this share of its slots is used.
  static constexpr double kBinding = 0.8;
  static constexpr double kRecovery = 2;  // share of the gap to the admitted rate, per second
  // A first throttle after less busy time than this is no measure of the
  // store: the rate then doubles every kDoubling until the next one.
  static constexpr std::chrono::milliseconds kMeasureSpan{500};
  static constexpr std::chrono::milliseconds kDoubling{250};
  static constexpr double kMinRate = 1;  // requests per second
  static constexpr std::chrono::seconds kReleaseAfter{30};

  // When the next request may start: `now` or earlier means at once.
  Clock::time_point NextSlot(Clock::time_point now) EXCLUDES(mu_);
  // A request that could have started at `ready` starts at `now`, taking
  // the slot (held back by the pacer when `ready` < `now`).
  void Take(Clock::time_point now, Clock::time_point ready) EXCLUDES(mu_);
  // A request started at `sent` got a throttled answer at `now`. Returns
  // true when that lowered the rate.
  bool OnThrottled(Clock::time_point sent, Clock::time_point now) EXCLUDES(mu_);
  // A request got a successful answer at `now`. Returns true when that
  // changed the rate.
  bool OnSuccess(Clock::time_point now) EXCLUDES(mu_);

  // Requests per second; 0: not paced.
  double rate() const EXCLUDES(mu_);

 private:
  // Counted per 100 ms slot over the last half second.
  static constexpr int kSlots = 5;
  static constexpr std::chrono::milliseconds kSlotWidth{100};
  // No request started or answered for this long: the bucket was idle.
  static constexpr std::chrono::milliseconds kIdleGap{250};
  Clock::duration Interval() const REQUIRES(mu_);  // between slots at rate_ > 0
  void NoteActivity(Clock::time_point now) REQUIRES(mu_);
  enum Counted { kSucceeded, kStarted };
  void Count(Counted what, Clock::time_point now) REQUIRES(mu_);
  // Per second over the slots kept, or since the bucket got busy.
  double RecentRate(Counted what, Clock::time_point now) REQUIRES(mu_);
  void MaybeRelease(Clock::time_point now) REQUIRES(mu_);

  mutable Mutex mu_;
  double rate_ GUARDED_BY(mu_) = 0;
  double admitted_ GUARDED_BY(mu_) = 0;   // the store's rate as the last decrease judged it
  bool probing_ GUARDED_BY(mu_) = false;  // admitted_ is a guess: grow fast until throttled
  Clock::time_point next_slot_ GUARDED_BY(mu_);
  Clock::time_point last_decrease_ GUARDED_BY(mu_);
  Clock::time_point last_throttle_ GUARDED_BY(mu_);
  bool waited_ GUARDED_BY(mu_) = false;  // a request was held back since the last success
  Clock::time_point waited_since_ GUARDED_BY(mu_);  // the first of them was ready
  Clock::time_point last_increase_ GUARDED_BY(mu_);
  // Successful answers and started requests per slot.
  std::array<std::array<uint32_t, kSlots>, 2> counts_ GUARDED_BY(mu_) = {};
  bool active_ GUARDED_BY(mu_) = false;           // any request seen yet
  Clock::time_point busy_since_ GUARDED_BY(mu_);  // requests resumed after an idle spell
  Clock::time_point last_active_ GUARDED_BY(mu_);
  int64_t newest_slot_ GUARDED_BY(mu_) = 0;  // index (time / kSlotWidth) of counts_' newest
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
