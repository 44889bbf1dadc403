#include "mount-tools/windowed_runner.h"

#include <cerrno>
#include <deque>
#include <memory>
#include <utility>

#include "base/mutex.h"

namespace bucketfs::tools {
namespace {

// Completions handed from transport threads to the calling thread.
class CompletionQueue {
 public:
  void Push(size_t index, Status status) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      items_.emplace_back(index, std::move(status));
    }
    cv_.NotifyOne();
  }
  std::pair<size_t, Status> Pop() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (items_.empty()) cv_.Wait(mu_);
    auto item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::deque<std::pair<size_t, Status>> items_ GUARDED_BY(mu_);
};

}  // namespace

Status RunWindowed(const WindowedJobs& jobs) {
  // Shared so that a completion arriving late never touches a dead queue.
  auto queue = std::make_shared<CompletionQueue>();
  size_t next = 0;
  int in_flight = 0;
  Status first_error;
  bool stopped = false;
  auto may_start = [&] {
    if (!stopped && jobs.stop_starting && jobs.stop_starting()) stopped = true;
    return !stopped;
  };
  while (true) {
    while (first_error.ok() && next < jobs.count && in_flight < jobs.window && may_start() &&
           (!jobs.can_start || jobs.can_start(next))) {
      size_t index = next++;
      ++in_flight;
      jobs.start(index, [queue, index](Status s) { queue->Push(index, std::move(s)); });
    }
    if (in_flight == 0) {
      if (first_error.ok() && next < jobs.count && !stopped) {
        return MakeError(EDEADLK, "Internal", "windowed runner: no job can start");
      }
      break;
    }
    auto [index, status] = queue->Pop();
    --in_flight;
    if (status.ok() && jobs.on_complete) status = jobs.on_complete(index);
    if (!status.ok() && first_error.ok()) first_error = std::move(status);
  }
  return first_error;
}

}  // namespace bucketfs::tools
