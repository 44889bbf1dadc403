// WorkerPool: a fixed set of threads over one FIFO queue (see task_runner.h).
#include "base/task_runner.h"

#include <algorithm>

namespace bucketfs::base {

WorkerPool::WorkerPool(int threads, const std::function<void()>& on_start) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.emplace_back([this, on_start] {
      if (on_start) on_start();
      Loop();
    });
  }
}

WorkerPool::~WorkerPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  for (auto& t : threads_) t.join();
}

void WorkerPool::Post(std::function<void()> task) {
  // Notified under the lock: the task may end the pool's owner, and the
  // destructor takes the lock before the condition variable goes.
  MutexLock lock(mu_);
  queue_.push_back(std::move(task));
  cv_.NotifyOne();
}

void WorkerPool::Drain() {
  MutexLock lock(mu_);
  while (!queue_.empty() || running_ != 0) idle_cv_.Wait(mu_);
}

void WorkerPool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(mu_);
      if (queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();
    task = nullptr;  // its captures go before Drain can return
    {
      MutexLock lock(mu_);
      if (--running_ == 0 && queue_.empty()) idle_cv_.NotifyAll();
    }
  }
}

}  // namespace bucketfs::base
