// AcceptLoop: one thread that accepts connections on a listening socket and
// hands each to a callback, one at a time, until Stop. The local endpoints
// of a mount (the control socket, the metrics port) serve a person or a
// scraper now and then, so one connection at a time is enough and keeps
// them from competing with the file system for the CPU.
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include "s3/result.h"

namespace bucketfs::tools {

class AcceptLoop {
 public:
  // Takes ownership of `listen_fd` (bound and listening).
  static Result<std::unique_ptr<AcceptLoop>> Create(int listen_fd);
  ~AcceptLoop();  // Stop(), then the listening socket is closed
  AcceptLoop(const AcceptLoop&) = delete;
  AcceptLoop& operator=(const AcceptLoop&) = delete;

  // `serve(conn_fd)` runs on the loop's thread for each connection, which
  // is closed when it returns. A callback that waits on its client should
  // also poll stop_fd() so that Stop is not held up.
  void Start(std::function<void(int conn_fd)> serve);
  // Wakes the thread and waits for it (and the connection it serves).
  void Stop();

  int listen_fd() const { return listen_fd_; }
  // Readable once Stop was called.
  int stop_fd() const { return wake_fd_; }

 private:
  AcceptLoop(int listen_fd, int wake_fd) : listen_fd_(listen_fd), wake_fd_(wake_fd) {}
  void Run();

  const int listen_fd_;
  const int wake_fd_;  // eventfd
  std::function<void(int)> serve_;
  std::thread thread_;
};

}  // namespace bucketfs::tools
