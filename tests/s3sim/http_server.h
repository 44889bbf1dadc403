// A small blocking HTTP/1.1 server for s3sim: one acceptor thread and one
// thread per connection (keep-alive). It reads a request head, asks the app
// whether to go on (so auth failures do not wait for a 1 GiB body), answers
// "100 Continue" when asked, reads the body (Content-Length or chunked),
// lets the app handle the request, then writes the response, applying the
// shaping knobs (first-byte delay, per-connection pacing) and any body fault
// the app chose (reset, truncate, stall).
//
// Large bodies are sent from the shared object buffer in big send() calls
// (the whole remainder when unpaced, ~10 ms slices when paced).
#ifndef TESTS_S3SIM_HTTP_SERVER_H_
#define TESTS_S3SIM_HTTP_SERVER_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "base/mutex.h"
#include "tests/s3sim/http_message.h"

namespace s3sim {

class HttpApp {
 public:
  virtual ~HttpApp() = default;
  // Called once the head is parsed, before the body is read. A returned
  // response is sent instead of handling the request.
  virtual std::optional<HttpResponse> Precheck(const HttpRequest& req) = 0;
  virtual HttpResponse Handle(HttpRequest& req) = 0;
  // A response for protocol-level errors (bad head, unsupported encoding).
  virtual HttpResponse ProtocolError(int status, const std::string& code,
                                     const std::string& message) = 0;
  // The response to a handled request was written (or the connection failed).
  virtual void Sent(const HttpResponse& /*resp*/) {}
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 0;           // 0: pick a free port
  int max_conns = 0;      // 0: unlimited; beyond it connections wait in the backlog
  int ttfb_ms = 0;        // delay before the first byte of each response
  double conn_mbps = 0;   // per-connection ceiling in 10^6 bytes/s; 0: unpaced
  int stall_ms = 600000;  // how long a stalled body holds the connection
  uint64_t max_body = 8ULL << 30;
};

class HttpServer {
 public:
  HttpServer(ServerConfig config, HttpApp* app);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens. Returns an error message on failure.
  std::optional<std::string> Listen();
  int port() const { return port_; }
  // Accepts until Stop(); returns after every connection thread has ended.
  void Run();
  // Thread-safe: stops accepting, cuts open connections, lets Run() return.
  void Stop();

 private:
  void ServeConnection(int fd) EXCLUDES(mu_);
  void ConnectionDone(int fd) EXCLUDES(mu_);

  const ServerConfig config_;
  HttpApp* const app_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<bool> stopping_{false};

  bucketfs::Mutex mu_;
  bucketfs::CondVar conns_cv_;
  std::set<int> conns_ GUARDED_BY(mu_);  // open connection fds
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_HTTP_SERVER_H_
