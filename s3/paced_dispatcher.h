// PacedDispatcher: holds the attempts of paced buckets until their
// RequestPacer gives them a start slot, on one thread of its own.
//
// A slot is taken when it comes, at the rate of that moment, so a rate the
// pacer just raised or lowered applies to every attempt still waiting (a
// read-ahead may queue many). Per pacer, attempts start in the order they
// came, except that one whose backoff (`earliest`) is not over lets the
// others pass. Stop() gives every waiting attempt `run(false)`; afterwards
// Enqueue refuses, and the caller submits the attempt itself.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <thread>

#include "base/mutex.h"
#include "s3/request_pacer.h"

namespace bucketfs::s3 {

class PacedDispatcher {
 public:
  using Clock = RequestPacer::Clock;
  // Runs the attempt (true: its slot came, `sent` is the start time) or
  // drops it (false: the dispatcher stopped).
  using Run = std::function<void(bool run, Clock::time_point sent)>;

  PacedDispatcher();
  ~PacedDispatcher();  // Stop()
  PacedDispatcher(const PacedDispatcher&) = delete;
  PacedDispatcher& operator=(const PacedDispatcher&) = delete;

  // False (and `run` untouched) once stopped.
  bool Enqueue(RequestPacer& pacer, Clock::time_point earliest, Run& run) EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);

 private:
  struct Waiting {
    RequestPacer* pacer;
    Clock::time_point earliest;
    Clock::time_point queued;
    Run run;
  };
  void Loop() EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::list<Waiting> waiting_ GUARDED_BY(mu_);  // in arrival order
  std::thread thread_;
};

}  // namespace bucketfs::s3
