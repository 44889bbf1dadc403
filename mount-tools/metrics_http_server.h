// MetricsHttpServer: `GET /metrics` on one listening TCP socket, answered by
// one thread, one connection at a time (a scraper every few seconds, not a
// web server). Bind happens apart from Start so the mount command can refuse
// a bad or busy address before it detaches and mounts, and start the thread
// in the serving process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "mount-tools/host_port.h"
#include "s3/result.h"

namespace bucketfs::tools {

class MetricsHttpServer {
 public:
  // Resolves and binds `addr` and listens. Errors name the address: cannot
  // resolve, address in use, permission denied.
  static Result<std::unique_ptr<MetricsHttpServer>> Bind(const HostPort& addr);
  ~MetricsHttpServer();  // Stop()
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Serves until Stop; `render` gives the exposition text of each scrape.
  void Start(std::function<std::string()> render);
  void Stop();

  // The bound port (tests bind to a port they then look up).
  int port() const;

 private:
  MetricsHttpServer(int listen_fd, int wake_fd);
  void Serve();
  void Answer(int fd);

  const int listen_fd_;
  const int wake_fd_;  // eventfd: Stop wakes the thread's poll
  std::function<std::string()> render_;
  std::thread thread_;
};

}  // namespace bucketfs::tools
