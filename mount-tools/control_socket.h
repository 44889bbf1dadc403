// ControlServer: a mount's local control socket (a Unix stream socket, mode
// 0600, see control_paths.h) that answers line commands from the same user
// (`bucketfs status`). Commands are a dispatch table: the mount command
// registers `status`; more can be registered before Start (a handler gets
// the connection's descriptor, so a command may also pass descriptors with
// SCM_RIGHTS). One connection at a time, served on one thread.
//
// Protocol (control_protocol.h): the client sends `COMMAND [ARG...]\n`, the
// server answers `ok\n` + body lines, or `error MESSAGE\n`, then an empty
// line; a connection may carry several commands.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "mount-tools/control_protocol.h"
#include "s3/result.h"

namespace bucketfs::tools {

class ControlServer {
 public:
  // What a handler returns is the reply body: key=value lines, no empty line.
  using Handler = std::function<Result<std::string>(const ControlRequest& request, int conn_fd)>;

  // Binds `path` (mode 0600). A socket file left by a dead daemon is
  // removed; one a live daemon answers on is an error.
  static Result<std::unique_ptr<ControlServer>> Listen(const std::string& path);
  ~ControlServer();  // Stop(), and the socket file is removed
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // REQUIRES: before Start. A later registration of a name replaces it.
  void Register(const std::string& command, Handler handler);
  void Start();
  void Stop();

  const std::string& path() const { return path_; }

 private:
  ControlServer(std::string path, int listen_fd, int wake_fd);
  void Serve();
  void Converse(int fd);  // one connection, command after command
  std::string Dispatch(const std::string& line, int fd);

  const std::string path_;
  const int listen_fd_;
  const int wake_fd_;  // eventfd: Stop wakes the thread
  std::map<std::string, Handler> handlers_;
  std::thread thread_;
};

// Sends `command` to the socket at `path` and returns the reply body.
// Errors: the socket does not answer (ECONNREFUSED: stale), or the daemon's
// error reply (message as sent).
Result<std::string> SendControlCommand(const std::string& path, const std::string& command);

}  // namespace bucketfs::tools
