#include "s3/paced_dispatcher.h"

#include <gtest/gtest.h>

#include <future>

namespace bucketfs::s3 {
namespace {

using Clock = PacedDispatcher::Clock;

TEST(PacedDispatcher, RunsAnAttemptWhoseSlotHasCome) {
  RequestPacer pacer;  // not paced: every slot is now
  PacedDispatcher d;
  std::promise<bool> ran;
  PacedDispatcher::Run run = [&ran](bool go, Clock::time_point) { ran.set_value(go); };
  ASSERT_TRUE(d.Enqueue(pacer, Clock::now(), run));
  EXPECT_TRUE(ran.get_future().get());
}

TEST(PacedDispatcher, StopDropsTheWaitingAndRefusesMore) {
  RequestPacer pacer;
  PacedDispatcher d;
  bool dropped = false;
  PacedDispatcher::Run run = [&dropped](bool go, Clock::time_point) { dropped = !go; };
  // Its backoff ends in an hour: still waiting when the dispatcher stops.
  ASSERT_TRUE(d.Enqueue(pacer, Clock::now() + std::chrono::hours(1), run));
  d.Stop();
  EXPECT_TRUE(dropped);
  PacedDispatcher::Run later = [](bool, Clock::time_point) {};
  EXPECT_FALSE(d.Enqueue(pacer, Clock::now(), later));
  EXPECT_TRUE(later);  // untouched: the caller runs it itself
}

TEST(PacedDispatcher, ABackoffDoesNotHoldBackTheOthers) {
  RequestPacer pacer;
  PacedDispatcher d;
  bool late_ran = false;
  PacedDispatcher::Run late = [&late_ran](bool go, Clock::time_point) { late_ran = go; };
  ASSERT_TRUE(d.Enqueue(pacer, Clock::now() + std::chrono::hours(1), late));
  std::promise<void> ran;
  PacedDispatcher::Run now = [&ran](bool, Clock::time_point) { ran.set_value(); };
  ASSERT_TRUE(d.Enqueue(pacer, Clock::now(), now));
  ran.get_future().get();
  d.Stop();
  EXPECT_FALSE(late_ran);
}

}  // namespace
}  // namespace bucketfs::s3
