// MetricsHttpServer: `GET /metrics` on one listening TCP socket, answered by
// one thread, one connection at a time (a scraper every few seconds, not a
// web server). Bind happens apart from Start so the mount command can refuse
// a bad or busy address before it detaches and mounts, and start the thread
// in the serving process.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "mount-tools/accept_loop.h"
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
  explicit MetricsHttpServer(std::unique_ptr<AcceptLoop> loop);
  void Answer(int fd);

  std::unique_ptr<AcceptLoop> loop_;
  std::function<std::string()> render_;
};

}  // namespace bucketfs::tools
