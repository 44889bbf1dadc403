#include "s3/request_pacer.h"

#include <gtest/gtest.h>

namespace bucketfs::s3 {
namespace {

using std::chrono::milliseconds;
using Clock = RequestPacer::Clock;

Clock::time_point T(int64_t ms) { return Clock::time_point{} + milliseconds(1000000 + ms); }

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Starts a request at the pacer's next slot (or `now` when that is sooner).
Clock::time_point Start(RequestPacer& p, Clock::time_point now) {
  const Clock::time_point slot = std::max(now, p.NextSlot(now));
  p.Take(slot, now);
  return slot;
}

// Demand above the rate from `from` for `ms`: each request is ready at the
// previous answer, starts at its slot and succeeds 1 ms later. Returns when
// it ended.
int64_t Saturate(RequestPacer& p, int64_t from, int64_t ms) {
  Clock::time_point now = T(from);
  while (now < T(from + ms)) {
    now = Start(p, now) + milliseconds(1);
    p.OnSuccess(now);
  }
  return (now - T(0)) / milliseconds(1);
}

TEST(RequestPacer, NothingIsPacedBeforeThrottling) {
  RequestPacer p;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(p.NextSlot(T(0)), T(0));
    p.Take(T(0), T(0));
    EXPECT_FALSE(p.OnSuccess(T(0)));
  }
  EXPECT_EQ(p.rate(), 0);
}

TEST(RequestPacer, FirstThrottleSetsTheRateFromTheAdmittedOne) {
  RequestPacer p;
  // 40 successes over one second: the store admits 40/s.
  for (int i = 0; i < 40; ++i) {
    p.Take(T(i * 25), T(i * 25));
    p.OnSuccess(T(i * 25 + 5));
  }
  EXPECT_TRUE(p.OnThrottled(T(990), T(999)));
  EXPECT_NEAR(p.rate(), RequestPacer::kDecrease * 40, 0.2);
  // The store just refused: the first slot is one interval later, the
  // others 1/rate apart.
  const Clock::time_point a = Start(p, T(999));
  const Clock::time_point b = Start(p, T(999));
  const Clock::time_point c = Start(p, T(999));
  EXPECT_NEAR(Seconds(a - T(999)), 1 / p.rate(), 1e-6);
  EXPECT_NEAR(Seconds(b - a), 1 / p.rate(), 1e-6);
  EXPECT_NEAR(Seconds(c - b), 1 / p.rate(), 1e-6);
}

TEST(RequestPacer, ANewRateAppliesToTheNextSlot) {
  RequestPacer p;
  for (int i = 0; i < 20; ++i) {
    p.Take(T(i * 50), T(i * 50));
    p.OnSuccess(T(i * 50 + 5));
  }
  p.OnThrottled(T(990), T(1000));
  const Clock::time_point a = Start(p, T(1000));
  // Slots are taken one at a time: a lower rate spaces the very next one.
  p.OnThrottled(a, a + milliseconds(5));
  const Clock::time_point b = Start(p, a + milliseconds(5));
  EXPECT_NEAR(Seconds(b - (a + milliseconds(5))), 1 / p.rate(), 1e-6);
}

TEST(RequestPacer, ThrottledStartIsNotTakenForASlowStore) {
  RequestPacer p;
  // 5 successes in the first 100 ms, then a throttle: 50/s admitted, not 5/s.
  for (int i = 0; i < 5; ++i) {
    p.Take(T(i * 20), T(i * 20));
    p.OnSuccess(T(i * 20 + 1));
  }
  p.OnThrottled(T(90), T(100));
  EXPECT_NEAR(p.rate(), RequestPacer::kDecrease * 50, 1e-9);
}

TEST(RequestPacer, AnIdleSpellIsNotTakenForASlowStore) {
  RequestPacer p;
  for (int i = 0; i < 100; ++i) {
    p.Take(T(i * 10), T(i * 10));
    p.OnSuccess(T(i * 10 + 1));
  }
  ASSERT_TRUE(p.OnThrottled(T(995), T(1000)));
  const double before = p.rate();
  // Idle for a while, then busy for 600 ms at the paced rate: the successes
  // over that spell, not over the idle second, measure the store.
  const int64_t now = Saturate(p, 5000, 600);
  ASSERT_TRUE(p.OnThrottled(T(now), T(now + 1)));
  EXPECT_GT(p.rate(), RequestPacer::kDecrease * RequestPacer::kDecrease * before * 0.9);
}

TEST(RequestPacer, DecreasesOncePerRoundTrip) {
  RequestPacer p;
  for (int i = 0; i < 100; ++i) {
    p.Take(T(i * 10), T(i * 10));
    p.OnSuccess(T(i * 10 + 1));
  }
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
  for (int i = 0; i < 20; ++i) {
    p.Take(T(i * 50), T(i * 50));
    p.OnSuccess(T(i * 50 + 1));
  }
  p.OnThrottled(T(990), T(1000));
  const double start = p.rate();
  // Demand below the rate: no request waits, the rate stays.
  for (int i = 1; i <= 20; ++i) {
    EXPECT_EQ(Start(p, T(1000 + i * 500)), T(1000 + i * 500));
    p.OnSuccess(T(1000 + i * 500 + 10));
  }
  EXPECT_EQ(p.rate(), start);
  // Demand above it: every request waits. Back to the admitted rate (20/s)
  // within a second (and at most a second's probe beyond)...
  int64_t now = Saturate(p, 12000, 1000);
  EXPECT_GT(p.rate(), 19.5);
  EXPECT_LE(p.rate(), 20 + RequestPacer::kIncreaseShare * 20);
  // ...then beyond it by about max(1, kIncreaseShare * rate) per second.
  now = Saturate(p, now, 200);
  const double admitted = p.rate();
  Saturate(p, now, 1000);
  EXPECT_GT(p.rate(), admitted * (1 + 0.8 * RequestPacer::kIncreaseShare));
  EXPECT_LT(p.rate(), admitted * (1 + 1.3 * RequestPacer::kIncreaseShare));
}

TEST(RequestPacer, ABurstIsNoReasonToRaise) {
  RequestPacer p;
  for (int i = 0; i < 20; ++i) {
    p.Take(T(i * 50), T(i * 50));
    p.OnSuccess(T(i * 50 + 1));
  }
  p.OnThrottled(T(990), T(1000));
  const double start = p.rate();
  // Two requests at once every 200 ms: the second waits, but most slots go
  // unused.
  for (int64_t now = 1200; now < 5000; now += 200) {
    for (int i = 0; i < 2; ++i) p.OnSuccess(Start(p, T(now)) + milliseconds(1));
  }
  EXPECT_EQ(p.rate(), start);
}

TEST(RequestPacer, AThrottleWhilePacedCutsALittle) {
  RequestPacer p;
  for (int i = 0; i < 20; ++i) {
    p.Take(T(i * 50), T(i * 50));
    p.OnSuccess(T(i * 50 + 1));
  }
  p.OnThrottled(T(990), T(1000));
  const int64_t now = Saturate(p, 1000, 2000);
  const double before = p.rate();
  // Even with few successes of late (less to send), one cut is at most
  // kDecrease twice.
  ASSERT_TRUE(p.OnThrottled(T(now), T(now + 1)));
  EXPECT_GE(p.rate(), RequestPacer::kDecrease * RequestPacer::kDecrease * before - 1e-9);
  EXPECT_LT(p.rate(), before);
}

TEST(RequestPacer, AGuessedRateDoublesUntilTheNextThrottle) {
  RequestPacer p;
  // Throttled 10 ms into the first busy spell: 2 successes say little.
  p.Take(T(0), T(0));
  p.OnSuccess(T(2));
  p.Take(T(3), T(3));
  p.OnSuccess(T(5));
  ASSERT_TRUE(p.OnThrottled(T(8), T(10)));
  const double guess = p.rate();
  // kDoubling of requests held back: about twice the guess.
  int64_t now = Saturate(p, 10, RequestPacer::kDoubling.count());
  EXPECT_GT(p.rate(), guess * 1.7);
  EXPECT_LT(p.rate(), guess * 2.3);
  // The next throttle ends the doubling.
  ASSERT_TRUE(p.OnThrottled(T(now), T(now + 1)));
  const double after = p.rate();
  Saturate(p, now + 1, 500);
  EXPECT_LT(p.rate(), after * 1.5);
}

TEST(RequestPacer, ReleasedAfterAQuietSpell) {
  RequestPacer p;
  for (int i = 0; i < 20; ++i) p.OnSuccess(T(i * 50));
  p.OnThrottled(T(990), T(1000));
  ASSERT_GT(p.rate(), 0);
  const int64_t later = 1000 + std::chrono::milliseconds(RequestPacer::kReleaseAfter).count() + 1;
  EXPECT_TRUE(p.OnSuccess(T(later)));
  EXPECT_EQ(p.rate(), 0);
  EXPECT_EQ(p.NextSlot(T(later)), T(later));
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
