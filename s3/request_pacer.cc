#include "s3/request_pacer.h"

#include <algorithm>

namespace bucketfs::s3 {
namespace {

double Seconds(RequestPacer::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

RequestPacer::Clock::time_point RequestPacer::Reserve(Clock::time_point now,
                                                      Clock::time_point earliest) {
  MutexLock lock(mu_);
  MaybeRelease(now);
  if (rate_ <= 0) return earliest;
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_));
  const Clock::time_point slot = std::max(earliest, next_slot_);
  next_slot_ = slot + interval;
  if (slot > earliest) last_waited_ = now;
  return slot;
}

bool RequestPacer::OnThrottled(Clock::time_point sent, Clock::time_point now) {
  MutexLock lock(mu_);
  last_throttle_ = now;
  // Requests sent before the last decrease went at the old rate: their
  // answers say nothing about the new one.
  if (rate_ > 0 && sent < last_decrease_) return false;
  const double admitted = RecentSuccessRate(now);
  const double base = rate_ > 0 ? std::min(rate_, std::max(admitted, kMinRate)) : admitted;
  rate_ = std::max(kMinRate, kDecrease * base);
  last_decrease_ = now;
  last_increase_ = now;
  next_slot_ = std::max(next_slot_, now);
  return true;
}

bool RequestPacer::OnSuccess(Clock::time_point now) {
  MutexLock lock(mu_);
  CountSuccess(now);
  if (rate_ <= 0) return false;
  MaybeRelease(now);
  if (rate_ <= 0) return true;
  const double dt = std::min(1.0, Seconds(now - last_increase_));
  if (dt <= 0) return false;
  last_increase_ = now;
  // Only a rate that holds requests back is worth raising.
  if (now - last_waited_ > std::chrono::seconds(1)) return false;
  rate_ += std::max(1.0, kIncreaseShare * rate_) * dt;
  return true;
}

double RequestPacer::rate() const {
  MutexLock lock(mu_);
  return rate_;
}

void RequestPacer::CountSuccess(Clock::time_point now) {
  if (!any_success_) {
    any_success_ = true;
    first_success_ = now;
  }
  const int64_t slot = now.time_since_epoch() / kSlotWidth;
  if (slot > newest_slot_) {
    // Clear the slots skipped since the newest one.
    for (int64_t s = std::max(newest_slot_ + 1, slot - kSlots + 1); s <= slot; ++s) {
      successes_[static_cast<size_t>(s % kSlots)] = 0;
    }
    newest_slot_ = slot;
  }
  if (slot > newest_slot_ - kSlots) ++successes_[static_cast<size_t>(slot % kSlots)];
}

double RequestPacer::RecentSuccessRate(Clock::time_point now) {
  const int64_t slot = now.time_since_epoch() / kSlotWidth;
  uint64_t total = 0;
  for (int64_t s = slot - kSlots + 1; s <= slot; ++s) {
    if (s >= 0 && s <= newest_slot_ && s > newest_slot_ - kSlots) {
      total += successes_[static_cast<size_t>(s % kSlots)];
    }
  }
  // Over the last second, or since the first success when that is sooner
  // (a throttled start would otherwise be taken for a slow store).
  const double span =
      std::clamp(Seconds(now - first_success_), Seconds(kSlotWidth), Seconds(kSlotWidth * kSlots));
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
