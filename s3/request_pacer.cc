#include "s3/request_pacer.h"

#include <algorithm>
#include <cmath>

namespace bucketfs::s3 {
namespace {

double Seconds(RequestPacer::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

RequestPacer::Clock::time_point RequestPacer::NextSlot(Clock::time_point now) {
  MutexLock lock(mu_);
  MaybeRelease(now);
  return rate_ > 0 ? next_slot_ : now;
}

void RequestPacer::Take(Clock::time_point now, Clock::time_point ready) {
  MutexLock lock(mu_);
  NoteActivity(now);
  Count(kStarted, now);
  MaybeRelease(now);
  if (rate_ <= 0) return;
  // From the slot missed, or from now after a pause: no burst after one.
  next_slot_ = std::max(next_slot_, now) + Interval();
  if (ready < now && !waited_) {
    waited_ = true;
    waited_since_ = ready;
  }
}

bool RequestPacer::OnThrottled(Clock::time_point sent, Clock::time_point now) {
  MutexLock lock(mu_);
  NoteActivity(now);
  last_throttle_ = now;
  // Requests sent before the last decrease went at the old rate: their
  // answers say nothing about the new one.
  if (rate_ > 0 && sent < last_decrease_) return false;
  const double succeeded = std::max(kMinRate, RecentRate(kSucceeded, now));
  const bool measured = now - busy_since_ >= kMeasureSpan;
  if (rate_ <= 0 || probing_) {
    // The first throttle, or the end of a probe that overshot by an unknown
    // amount: the successes measure the store, when there was time to.
    admitted_ = rate_ <= 0 ? succeeded : measured ? std::min(rate_, succeeded) : rate_;
    probing_ = rate_ <= 0 && !measured;
  } else {
    // Paced at a rate the store admitted a moment ago: it is a little too
    // high. Successes below that may only mean there was less to send.
    admitted_ = measured ? std::min(rate_, std::max(succeeded, kDecrease * rate_)) : rate_;
  }
  rate_ = std::max(kMinRate, kDecrease * admitted_);
  last_decrease_ = now;
  last_increase_ = now;
  // The store just refused: its allowance is spent, the next slot is one
  // interval away.
  next_slot_ = std::max(next_slot_, now + Interval());
  return true;
}

bool RequestPacer::OnSuccess(Clock::time_point now) {
  MutexLock lock(mu_);
  NoteActivity(now);
  Count(kSucceeded, now);
  if (rate_ <= 0) return false;
  MaybeRelease(now);
  if (rate_ <= 0) return true;
  // Only a rate that held requests back is worth raising, for as long as
  // it did since the last success.
  const double dt = std::min(1.0, Seconds(now - std::max(last_increase_, waited_since_)));
  const bool waited = waited_;
  last_increase_ = now;
  waited_ = false;
  if (!waited || dt <= 0) return false;
  // Requests waited, but fewer started than the rate allows: a burst, not
  // a rate too low.
  if (RecentRate(kStarted, now) < kBinding * rate_) return false;
  const double probe = std::max(1.0, kIncreaseShare * rate_);
  if (probing_) {
    rate_ *= std::exp2(dt / Seconds(kDoubling));
  } else if (rate_ < admitted_) {
    rate_ = std::min(admitted_, rate_ + std::max(probe, kRecovery * (admitted_ - rate_)) * dt);
  } else {
    rate_ += probe * dt;
  }
  return true;
}

double RequestPacer::rate() const {
  MutexLock lock(mu_);
  return rate_;
}

RequestPacer::Clock::duration RequestPacer::Interval() const {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_));
}

void RequestPacer::NoteActivity(Clock::time_point now) {
  if (!active_ || now - last_active_ > kIdleGap) busy_since_ = now;
  active_ = true;
  last_active_ = std::max(last_active_, now);
}

void RequestPacer::Count(Counted what, Clock::time_point now) {
  const int64_t slot = now.time_since_epoch() / kSlotWidth;
  if (slot > newest_slot_) {
    // Clear the slots skipped since the newest one.
    for (int64_t s = std::max(newest_slot_ + 1, slot - kSlots + 1); s <= slot; ++s) {
      for (auto& c : counts_) c[static_cast<size_t>(s % kSlots)] = 0;
    }
    newest_slot_ = slot;
  }
  if (slot > newest_slot_ - kSlots) ++counts_[what][static_cast<size_t>(slot % kSlots)];
}

double RequestPacer::RecentRate(Counted what, Clock::time_point now) {
  const int64_t slot = now.time_since_epoch() / kSlotWidth;
  // An idle spell, or a throttled start, would otherwise read as a slow store.
  const int64_t first = std::max(slot - kSlots + 1, busy_since_.time_since_epoch() / kSlotWidth);
  uint64_t total = 0;
  for (int64_t s = first; s <= slot; ++s) {
    if (s >= 0 && s <= newest_slot_ && s > newest_slot_ - kSlots) {
      total += counts_[what][static_cast<size_t>(s % kSlots)];
    }
  }
  const Clock::time_point from = std::max(busy_since_, Clock::time_point(kSlotWidth * first));
  const double span = std::max(Seconds(now - from), Seconds(kSlotWidth));
  return static_cast<double>(total) / span;
}

void RequestPacer::MaybeRelease(Clock::time_point now) {
  if (rate_ > 0 && now - last_throttle_ > kReleaseAfter) rate_ = 0;
}

RequestPacer& RequestPacing::For(const std::string& bucket) {
  MutexLock lock(mu_);
  std::unique_ptr<RequestPacer>& p = pacers_[bucket];
  if (!p) p = std::make_unique<RequestPacer>();
  return *p;
}

bool IsThrottleAnswer(int http_status, std::string_view code) {
  return http_status == 503 || http_status == 429 || code == "SlowDown";
}

}  // namespace bucketfs::s3
