// WorkerPool: every task runs, after its thread's start, and the queue
// drains when the pool goes; a thread's priority lowered alone.
#include "base/task_runner.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "base/thread_priority.h"

namespace bucketfs::base {
namespace {

TEST(WorkerPoolTest, RunsEveryTaskAndDrainsTheQueueWhenDestroyed) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(2);
    for (int i = 0; i < 100; ++i) {
      pool.Post([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(WorkerPoolTest, EveryThreadRunsItsStartBeforeItsTasks) {
  Mutex mu;
  std::set<std::thread::id> started;
  std::atomic<int> ran_after_start{0};
  {
    WorkerPool pool(3, [&] {
      MutexLock lock(mu);
      started.insert(std::this_thread::get_id());
    });
    for (int i = 0; i < 60; ++i) {
      pool.Post([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        MutexLock lock(mu);
        if (started.count(std::this_thread::get_id()) == 1) ++ran_after_start;
      });
    }
  }
  EXPECT_EQ(ran_after_start.load(), 60);
  EXPECT_LE(started.size(), 3u);
}

TEST(ThreadPriorityTest, LowersTheCallingThreadOnly) {
  const int before = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  int in_thread = 0;
  bool lowered = false;
  std::thread t([&] {
    lowered = LowerThisThreadsPriority();
    in_thread = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  });
  t.join();
  ASSERT_TRUE(lowered);
  EXPECT_EQ(in_thread, 19);
  EXPECT_EQ(::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())), before);
}

}  // namespace
}  // namespace bucketfs::base
