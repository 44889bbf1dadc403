#include "s3/paced_dispatcher.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace bucketfs::s3 {

PacedDispatcher::PacedDispatcher() : thread_([this] { Loop(); }) {}

PacedDispatcher::~PacedDispatcher() { Stop(); }

bool PacedDispatcher::Enqueue(RequestPacer& pacer, Clock::time_point earliest, Run& run) {
  MutexLock lock(mu_);
  if (stop_) return false;
  waiting_.push_back(Waiting{&pacer, earliest, Clock::now(), std::move(run)});
  cv_.NotifyOne();  // under the lock, which Stop takes before the object may go
  return true;
}

void PacedDispatcher::Stop() {
  std::list<Waiting> dropped;
  {
    MutexLock lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.NotifyOne();
  if (thread_.joinable()) thread_.join();
  {
    MutexLock lock(mu_);
    dropped.swap(waiting_);
  }
  for (Waiting& w : dropped) w.run(false, Clock::now());
}

void PacedDispatcher::Loop() {
  std::vector<Waiting> due;
  MutexLock lock(mu_);
  while (!stop_) {
    const Clock::time_point now = Clock::now();
    Clock::time_point wake = Clock::time_point::max();
    // A pacer whose next slot is taken (or not yet come) in this pass starts
    // nothing more: later attempts keep their place behind the first one.
    std::set<RequestPacer*> blocked;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->earliest > now) {
        wake = std::min(wake, it->earliest);
        ++it;
        continue;
      }
      if (blocked.contains(it->pacer)) {
        ++it;
        continue;
      }
      const Clock::time_point slot = it->pacer->NextSlot(now);
      if (slot > now) {
        wake = std::min(wake, slot);
        blocked.insert(it->pacer);
        ++it;
        continue;
      }
      it->pacer->Take(now, std::max(it->queued, it->earliest));
      due.push_back(std::move(*it));
      it = waiting_.erase(it);
      // The next attempt of this pacer waits for the slot after this one.
      blocked.insert(due.back().pacer);
      const Clock::time_point next = due.back().pacer->NextSlot(now);
      if (next > now) wake = std::min(wake, next);
    }
    if (!due.empty()) {
      lock.Unlock();
      for (Waiting& w : due) w.run(true, now);
      due.clear();
      lock.Lock();
      continue;
    }
    if (wake == Clock::time_point::max()) {
      cv_.Wait(mu_);
    } else {
      cv_.WaitUntil(mu_, wake);
    }
  }
}

}  // namespace bucketfs::s3
