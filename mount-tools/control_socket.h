// ControlServer: a mount's local control socket (a Unix stream socket, mode
// 0600, see control_paths.h) that answers line commands from the same user
// (`bucketfs status`). Commands are a dispatch table: the mount command
// registers `status` and `handover`; more can be registered before Start. A
// reply may carry descriptors (SCM_RIGHTS), for handing a mount to another
// process. One connection at a time, served on one thread.
//
// Protocol (control_protocol.h): the client sends `COMMAND [ARG...]\n`, the
// server answers `ok\n` + body lines, or `error MESSAGE\n`, then an empty
// line; a connection may carry several commands.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mount-tools/accept_loop.h"
#include "mount-tools/control_protocol.h"
#include "s3/result.h"

namespace bucketfs::tools {

// A reply: key=value lines (no empty line), and descriptors sent with it.
struct ControlAnswer {
  ControlAnswer(std::string b) : body(std::move(b)) {}  // NOLINT(google-explicit-constructor)
  ControlAnswer(std::string b, std::vector<int> f) : body(std::move(b)), fds(std::move(f)) {}
  std::string body;
  std::vector<int> fds;  // the server sends copies; the handler keeps its own
};

class ControlServer {
 public:
  // `stop_fd` becomes readable when the server stops: a handler that waits
  // long should watch it.
  using Handler = std::function<Result<ControlAnswer>(const ControlRequest& request, int stop_fd)>;

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
  ControlServer(std::string path, std::unique_ptr<AcceptLoop> loop);
  void Converse(int fd);  // one connection, command after command
  Result<ControlAnswer> Dispatch(const std::string& line);

  const std::string path_;
  std::unique_ptr<AcceptLoop> loop_;
  std::map<std::string, Handler> handlers_;
};

// Sends `command` to the socket at `path` and returns the reply body.
// Errors: the socket does not answer (ECONNREFUSED: stale), no complete
// reply within 10 s (ETIMEDOUT), or the daemon's error reply (message as sent).
Result<std::string> SendControlCommand(const std::string& path, const std::string& command);

// The same, waiting up to `timeout_ms` for the reply, and returning the
// descriptors it carried (the caller owns them; on an error none are left open).
Result<ControlAnswer> CallControl(const std::string& path, const std::string& command,
                                  int timeout_ms);

}  // namespace bucketfs::tools
