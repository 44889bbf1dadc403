// WorkerPool: every task runs, and the queue drains when the pool goes.
#include "base/task_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

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

}  // namespace
}  // namespace bucketfs::base
