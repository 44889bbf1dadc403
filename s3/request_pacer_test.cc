#include "s3/request_pacer.h"

#include <gtest/gtest.h>

namespace bucketfs::s3 {
namespace {

using std::chrono::milliseconds;
using Clock = RequestPacer::Clock;

Clock::time_point T(int64_t ms) { return Clock::time_point{} + milliseconds(1000000 + ms); }

TEST(RequestPacer, NothingIsPacedBeforeThrottling) {
  RequestPacer p;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(p.Reserve(T(0), T(0)), T(0));
    EXPECT_FALSE(p.OnSuccess(T(0)));
  }
  EXPECT_EQ(p.rate(), 0);
  // A backoff delay is kept.
  EXPECT_EQ(p.Reserve(T(0), T(250)), T(250));
}

TEST(RequestPacer, FirstThrottleSetsTheRateFromTheAdmittedOne) {
  RequestPacer p;
  // 40 successes over one second: the store admits 40/s.
  for (int i = 0; i < 40; ++i) p.OnSuccess(T(i * 25));
  EXPECT_TRUE(p.OnThrottled(T(990), T(999)));
  EXPECT_NEAR(p.rate(), RequestPacer::kDecrease * 40, 0.1);
  // Slots are 1/rate apart from now on.
  const Clock::time_point a = p.Reserve(T(1000), T(1000));
  const Clock::time_point b = p.Reserve(T(1000), T(1000));
  const Clock::time_point c = p.Reserve(T(1000), T(1000));
  EXPECT_EQ(a, T(1000));
  EXPECT_NEAR(std::chrono::duration<double>(b - a).count(), 1 / p.rate(), 1e-6);
  EXPECT_NEAR(std::chrono::duration<double>(c - b).count(), 1 / p.rate(), 1e-6);
}

TEST(RequestPacer, ThrottledStartIsNotTakenForASlowStore) {
  RequestPacer p;
  // 5 successes in the first 100 ms, then a throttle: 50/s admitted, not 5/s.
  for (int i = 0; i < 5; ++i) p.OnSuccess(T(i * 20));
  p.OnThrottled(T(90), T(100));
  EXPECT_NEAR(p.rate(), RequestPacer::kDecrease * 50, 1e-9);
}

TEST(RequestPacer, DecreasesOncePerRoundTrip) {
  RequestPacer p;
  for (int i = 0; i < 100; ++i) p.OnSuccess(T(i * 10));
  ASSERT_TRUE(p.OnThrottled(T(990), T(1000)));
  const double after_first = p.rate();
  // Answers to requests sent before that decrease do not lower it again.
  EXPECT_FALSE(p.OnThrottled(T(995), T(1001)));
  EXPECT_FALSE(p.OnThrottled(T(999), T(1002)));
  EXPECT_EQ(p.rate(), after_first);
  // One sent after it does.
  EXPECT_TRUE(p.OnThrottled(T(1003), T(1010)));
  EXPECT_LT(p.rate(), after_first);
  EXPECT_GE(p.rate(), RequestPacer::kMinRate);
}

TEST(RequestPacer, NeverBelowTheMinimum) {
  RequestPacer p;
  p.OnThrottled(T(0), T(0));  // throttled before any success
  EXPECT_EQ(p.rate(), RequestPacer::kMinRate);
  for (int i = 1; i < 50; ++i) p.OnThrottled(T(i * 10), T(i * 10 + 1));
  EXPECT_EQ(p.rate(), RequestPacer::kMinRate);
}

TEST(RequestPacer, RaisesOnlyWhileTheRateHoldsRequestsBack) {
  RequestPacer p;
  for (int i = 0; i < 20; ++i) p.OnSuccess(T(i * 50));
  p.OnThrottled(T(990), T(1000));
  const double start = p.rate();
  // Demand below the rate: no request waits, the rate stays.
  for (int i = 1; i <= 20; ++i) {
    EXPECT_EQ(p.Reserve(T(1000 + i * 500), T(1000 + i * 500)), T(1000 + i * 500));
    p.OnSuccess(T(1000 + i * 500 + 10));
  }
  EXPECT_EQ(p.rate(), start);
  // Demand above it: every request waits, the rate grows about
  // max(1, kIncreaseShare * rate) per second.
  int64_t now = 12000;
  for (int i = 0; i < 100; ++i, now += 10) {
    p.Reserve(T(now), T(now));
    p.Reserve(T(now), T(now));
    p.OnSuccess(T(now));
  }
  EXPECT_GT(p.rate(), start + 0.9 * std::max(1.0, RequestPacer::kIncreaseShare * start));
  EXPECT_LT(p.rate(), start * 1.3 + 1.5);
}

TEST(RequestPacer, ReleasedAfterAQuietSpell) {
  RequestPacer p;
  for (int i = 0; i < 20; ++i) p.OnSuccess(T(i * 50));
  p.OnThrottled(T(990), T(1000));
  ASSERT_GT(p.rate(), 0);
  const int64_t later = 1000 + std::chrono::milliseconds(RequestPacer::kReleaseAfter).count() + 1;
  EXPECT_TRUE(p.OnSuccess(T(later)));
  EXPECT_EQ(p.rate(), 0);
  EXPECT_EQ(p.Reserve(T(later), T(later)), T(later));
}

TEST(RequestPacer, RetryBackoffIsTheEarliestSlot) {
  RequestPacer p;
  for (int i = 0; i < 10; ++i) p.OnSuccess(T(i * 100));
  p.OnThrottled(T(990), T(1000));
  EXPECT_EQ(p.Reserve(T(1000), T(1800)), T(1800));
}

TEST(RequestPacing, OnePacerPerBucket) {
  RequestPacing pacing;
  RequestPacer& a = pacing.For("a");
  EXPECT_EQ(&pacing.For("a"), &a);
  EXPECT_NE(&pacing.For("b"), &a);
  a.OnThrottled(T(0), T(0));
  EXPECT_GT(a.rate(), 0);
  EXPECT_EQ(pacing.For("b").rate(), 0);
}

TEST(RequestPacer, ThrottleAnswers) {
  EXPECT_TRUE(IsThrottleAnswer(503, "SlowDown"));
  EXPECT_TRUE(IsThrottleAnswer(503, ""));
  EXPECT_TRUE(IsThrottleAnswer(429, ""));
  EXPECT_TRUE(IsThrottleAnswer(200, "SlowDown"));  // an <Error> inside HTTP 200
  EXPECT_FALSE(IsThrottleAnswer(500, "InternalError"));
  EXPECT_FALSE(IsThrottleAnswer(0, "Reset"));
}

}  // namespace
}  // namespace bucketfs::s3
