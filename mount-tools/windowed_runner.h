// RunWindowed: keeps up to `window` asynchronous jobs in flight out of
// `count`, the engine under `get`, `put` and `bench`.
//
// Jobs are started on the calling thread; each job reports exactly once
// through its Completion, from any thread (usually a transport thread). The
// completions are queued and `on_complete` runs on the calling thread, so the
// per-job bookkeeping (buffer free lists, in-order writers) needs no locks.
// After the first failure no new job starts; the jobs in flight are drained
// before RunWindowed returns that first error, so no buffer a job writes into
// is released while a transfer still uses it.
#pragma once

#include <cstddef>
#include <functional>

#include "s3/result.h"

namespace bucketfs::tools {

using Completion = std::function<void(Status)>;

struct WindowedJobs {
  size_t count = 0;
  int window = 1;  // >= 1
  // Optional: may job `i` start now? (e.g. its buffer is free). Must become
  // true once the jobs in flight complete. Called on the calling thread.
  std::function<bool(size_t)> can_start;
  // Starts job i. REQUIRES: `done` is called exactly once.
  std::function<void(size_t i, Completion done)> start;
  // Optional: runs on the calling thread after job i succeeded; an error
  // stops the run like a failed job.
  std::function<Status(size_t i)> on_complete;
  // Optional: once it returns true no job starts any more, and the run ends
  // successfully when those in flight completed (a time-limited benchmark).
  // Called on the calling thread before each start.
  std::function<bool()> stop_starting;
};

Status RunWindowed(const WindowedJobs& jobs);

}  // namespace bucketfs::tools
