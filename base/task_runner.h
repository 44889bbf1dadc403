// TaskRunner: where work leaves the thread that asked for it, so that thread
// (a FUSE thread carrying an application's write() or read()) is not held up
// by it: upload/ prepares parts and writes its staging file on runners, fuse/
// sends lookups and replies on them.
//
// WorkerPool is the mount's runner: a fixed set of threads taking tasks from
// one queue in order. Tests inject runners that hold or inline tasks (the
// scheduler is injected so asynchronous cases are deterministic).
// Thread-safe.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::base {

class TaskRunner {
 public:
  virtual ~TaskRunner() = default;
  // Runs `task` once, later or now, on some thread.
  // REQUIRES: `task` does not wait for another task of this runner.
  virtual void Post(std::function<void()> task) = 0;
};

class WorkerPool : public TaskRunner {
 public:
  // `on_start`, when given, runs on each thread before its first task (to
  // set that thread's scheduling, say).
  explicit WorkerPool(int threads, const std::function<void()>& on_start = {});
  // Runs what is still queued, then joins the threads.
  // REQUIRES: not called on one of the pool's threads.
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Post(std::function<void()> task) override;

  // Returns once every task posted before the call has run (tasks they post
  // run too). REQUIRES: not called on one of the pool's threads.
  void Drain() EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  int running_ GUARDED_BY(mu_) = 0;  // tasks taken off the queue, not yet returned
  CondVar idle_cv_;                  // queue_ empty and running_ == 0
  std::vector<std::thread> threads_;
};

}  // namespace bucketfs::base
