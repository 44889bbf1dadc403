#include "mount-tools/windowed_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace bucketfs::tools {
namespace {

// Jobs complete on another thread, as transport completions do.
struct AsyncJobs {
  std::vector<std::thread> threads;
  ~AsyncJobs() {
    for (auto& t : threads) t.join();
  }
  void Start(Completion done) {
    threads.emplace_back([done = std::move(done)] { done(Status::Ok()); });
  }
};

TEST(WindowedRunnerTest, RunsEveryJobWithinTheWindow) {
  AsyncJobs async;
  int in_flight = 0, most = 0, completed = 0;
  WindowedJobs jobs;
  jobs.count = 50;
  jobs.window = 4;
  jobs.start = [&](size_t, Completion done) {
    most = std::max(most, ++in_flight);
    async.Start(std::move(done));
  };
  jobs.on_complete = [&](size_t) {
    --in_flight;
    ++completed;
    return Status::Ok();
  };
  ASSERT_TRUE(RunWindowed(jobs).ok());
  EXPECT_EQ(completed, 50);
  EXPECT_LE(most, 4);
}

TEST(WindowedRunnerTest, StopStartingEndsTheRunOnceTheJobsInFlightComplete) {
  AsyncJobs async;
  int started = 0, completed = 0;
  WindowedJobs jobs;
  jobs.count = 1000;
  jobs.window = 4;
  jobs.stop_starting = [&] { return started >= 10; };
  jobs.start = [&](size_t, Completion done) {
    ++started;
    async.Start(std::move(done));
  };
  jobs.on_complete = [&](size_t) {
    ++completed;
    return Status::Ok();
  };
  // Not the "no job can start" deadlock error: stopping is a normal end.
  ASSERT_TRUE(RunWindowed(jobs).ok());
  EXPECT_EQ(started, 10);
  EXPECT_EQ(completed, 10);
}

}  // namespace
}  // namespace bucketfs::tools
