// Fakes for the StagedUpload tests that move work off the writer's thread: a
// runner that holds its tasks, staging file calls that fail or stall, and a
// poll for what happens on another thread.
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <deque>
#include <functional>
#include <thread>

#include "base/mutex.h"
#include "base/task_runner.h"
#include "cache/staging_file.h"

namespace bucketfs::upload::testing {

// Holds posted tasks until RunHeld (or runs them at once when not holding).
class HeldRunner : public base::TaskRunner {
 public:
  void Post(std::function<void()> task) override {
    {
      MutexLock lock(mu);
      if (hold) {
        held.push_back(std::move(task));
        return;
      }
    }
    task();
  }
  size_t Held() {
    MutexLock lock(mu);
    return held.size();
  }
  void RunHeld(bool keep_holding) {
    std::deque<std::function<void()>> run;
    {
      MutexLock lock(mu);
      run.swap(held);
      hold = keep_holding;
    }
    for (auto& f : run) f();
  }

  Mutex mu;
  bool hold = true;
  std::deque<std::function<void()>> held;
};

// Fails pread with a chosen errno once armed.
class FaultyReadOps : public cache::StagingFileOps {
 public:
  ssize_t PRead(int fd, void* buf, size_t n, off_t offset) override {
    if (fail_errno.load() != 0) {
      errno = fail_errno.load();
      return -1;
    }
    return StagingFileOps::PRead(fd, buf, n, offset);
  }
  std::atomic<int> fail_errno{0};
};

// Holds every pwrite at or past `from` until Release; counts them.
class StuckDiskOps : public cache::StagingFileOps {
 public:
  explicit StuckDiskOps(off_t from) : from_(from) {}
  ssize_t PWrite(int fd, const void* buf, size_t n, off_t offset) override {
    if (offset >= from_) {
      MutexLock lock(mu_);
      ++calls_;
      bytes_ += n;
      while (!released_) cv_.Wait(mu_);
    }
    if (offset >= from_ && fail_errno_ != 0) {
      errno = fail_errno_;
      return -1;
    }
    return StagingFileOps::PWrite(fd, buf, n, offset);
  }
  // Released writes fail with `e` (0: they succeed).
  void FailWith(int e) {
    MutexLock lock(mu_);
    fail_errno_ = e;
  }
  void Release() {
    MutexLock lock(mu_);
    released_ = true;
    cv_.NotifyAll();
  }
  size_t bytes() {
    MutexLock lock(mu_);
    return bytes_;
  }
  int calls() {
    MutexLock lock(mu_);
    return calls_;
  }

 private:
  const off_t from_;
  Mutex mu_;
  CondVar cv_;
  bool released_ = false;
  int fail_errno_ = 0;
  int calls_ = 0;
  size_t bytes_ = 0;
};

// Polls `done` for up to 10 s.
inline bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 10000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();

}  // namespace bucketfs::upload::testing
