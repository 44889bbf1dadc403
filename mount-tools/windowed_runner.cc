#include "mount-tools/windowed_runner.h"

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>

namespace bucketfs::tools {
namespace {

// Completions handed from transport threads to the calling thread.
class CompletionQueue {
 public:
  void Push(size_t index, Status status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.emplace_back(index, std::move(status));
    }
    cv_.notify_one();
  }
  std::pair<size_t, Status> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !items_.empty(); });
    auto item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, Status>> items_;  // GUARDED_BY(mu_)
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
