// Detaching the mount process: `bucketfs` returns to the shell only once the
// mount is serving (exit 0) or has failed (exit 1, with the reason printed),
// the way mount(8) and fstab expect of a mount helper.
//
// RunDetached forks once. The child starts a new session (no controlling
// terminal), moves to "/" (so it keeps no directory busy), points stdin and
// stdout at /dev/null, and runs the mount; it reports the outcome through a
// pipe with MountResultReporter. The parent blocks on that pipe: "ok" ->
// exit 0; an error message, or the child dying before it reported -> print,
// exit 1. stderr stays the caller's until the report, so a failure to mount
// is visible on the terminal; after a successful report it goes to
// /dev/null unless the child already redirected it (to --log-file).
//
// REQUIRES: called while the process has a single thread: fork() copies only
// the calling thread, so anything that starts threads (the S3 client's
// transport, spdlog's flusher, libfuse's loop) must be created in the child.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>

#include "s3/result.h"

namespace bucketfs::tools {

// Sends one mount outcome to the waiting parent. Thread-safe; only the first
// Report counts. A reporter over fd -1 (the foreground case) reports nothing.
class MountResultReporter {
 public:
  MountResultReporter(int fd, bool silence_stderr_on_success)
      : fd_(fd), silence_stderr_(silence_stderr_on_success) {}
  ~MountResultReporter();
  MountResultReporter(const MountResultReporter&) = delete;
  MountResultReporter& operator=(const MountResultReporter&) = delete;

  void Report(const Status& status);
  bool reported() const { return reported_.load(); }
  // The child redirected stderr itself (to a log file): leave it alone.
  void KeepStderr() { silence_stderr_ = false; }

 private:
  int fd_;
  bool silence_stderr_;
  std::atomic<bool> reported_{false};
};

// Forks; returns the parent's exit code (0 mounted, 1 failed). In the child,
// runs `child_main` and exits the process with its return value.
int RunDetached(const std::function<int(MountResultReporter&)>& child_main);

// The wire format between child and parent, exposed for tests:
// "ok" or "error:" + message.
std::string EncodeMountResult(const Status& status);
// Returns "" for success, else the message to print (covers an empty read,
// meaning the child died before it reported).
std::string DecodeMountResult(const std::string& wire);

}  // namespace bucketfs::tools
