#include "tests/s3sim/rate_limiter.h"

#include <gtest/gtest.h>

namespace s3sim {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiter, OffAdmitsEverything) {
  RateLimiter limiter({});
  const auto t = RateLimiter::Clock::time_point{};
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limiter.Admit("b", t));
}

TEST(RateLimiter, BurstThenRate) {
  RateLimiter limiter({.rate = 100, .burst = 5});
  auto t = RateLimiter::Clock::time_point{} + milliseconds(1);
  int admitted = 0;
  for (int i = 0; i < 20; ++i) admitted += limiter.Admit("b", t) ? 1 : 0;
  EXPECT_EQ(admitted, 5);  // the burst, then nothing at the same instant
  // One second later: refilled to the burst, not to 100.
  t += milliseconds(1000);
  admitted = 0;
  for (int i = 0; i < 20; ++i) admitted += limiter.Admit("b", t) ? 1 : 0;
  EXPECT_EQ(admitted, 5);
  // Paced at exactly the rate: every request admitted.
  for (int i = 0; i < 500; ++i) {
    t += milliseconds(10);
    EXPECT_TRUE(limiter.Admit("b", t)) << i;
  }
  // Twice the rate: about half refused, and refusals take no token.
  admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    t += milliseconds(5);
    admitted += limiter.Admit("b", t) ? 1 : 0;
  }
  EXPECT_NEAR(admitted, 500, 6);
}

TEST(RateLimiter, ScopesAreIndependent) {
  RateLimiter per_bucket({.rate = 10, .burst = 1});
  EXPECT_EQ(per_bucket.ScopeOf("b", "x/y"), "b");
  RateLimiter per_prefix({.rate = 10, .burst = 1, .per_prefix = true});
  EXPECT_EQ(per_prefix.ScopeOf("b", "x/y"), "b/x");
  EXPECT_EQ(per_prefix.ScopeOf("b", "top"), "b/top");
  EXPECT_EQ(per_prefix.ScopeOf("b", ""), "b/");
  const auto t = RateLimiter::Clock::time_point{} + milliseconds(1);
  EXPECT_TRUE(per_prefix.Admit("b/x", t));
  EXPECT_FALSE(per_prefix.Admit("b/x", t));
  EXPECT_TRUE(per_prefix.Admit("b/z", t));
  EXPECT_TRUE(per_prefix.Admit("c/x", t));
}

TEST(RateLimiter, DefaultBurstIsATenthOfTheRate) {
  RateLimiter limiter({.rate = 50});
  const auto t = RateLimiter::Clock::time_point{} + milliseconds(1);
  int admitted = 0;
  for (int i = 0; i < 20; ++i) admitted += limiter.Admit("b", t) ? 1 : 0;
  EXPECT_EQ(admitted, 5);
}

}  // namespace
}  // namespace s3sim
