#include "mount-tools/metrics_http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mount-tools/accept_loop.h"
#include "mount-tools/http_request.h"

namespace bucketfs::tools {
namespace {

constexpr size_t kMaxHead = 8192;
constexpr int kClientTimeoutMs = 5000;  // a stuck client must not hold the endpoint for long

std::string Show(const HostPort& a) {
  return a.host.find(':') != std::string::npos ? "[" + a.host + "]:" + std::to_string(a.port)
                                               : a.host + ":" + std::to_string(a.port);
}

// Reads until the end of the request head, its limit, or the timeout.
std::string ReadHead(int fd) {
  std::string head;
  char buf[1024];
  while (head.size() < kMaxHead && head.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kClientTimeoutMs) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  return head;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Bind(const HostPort& addr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(addr.port);
  if (int rc = ::getaddrinfo(addr.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return MakeError(EINVAL, "MetricsAddr",
                     "--metrics-addr " + Show(addr) + ": cannot resolve '" + addr.host +
                         "': " + ::gai_strerror(rc));
  }
  int err = 0;
  int fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    std::string why = std::strerror(err);
    if (err == EADDRINUSE) why = "the port is in use by another process";
    if (err == EADDRNOTAVAIL) why = "no interface of this machine has that address";
    return MakeError(err, "MetricsAddr", "--metrics-addr " + Show(addr) + ": " + why);
  }
  auto loop = AcceptLoop::Create(fd);
  if (!loop.ok()) return loop.error();
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(std::move(*loop)));
}

MetricsHttpServer::MetricsHttpServer(std::unique_ptr<AcceptLoop> loop) : loop_(std::move(loop)) {}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

int MetricsHttpServer::port() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(loop_->listen_fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

void MetricsHttpServer::Start(std::function<std::string()> render) {
  render_ = std::move(render);
  loop_->Start([this](int fd) { Answer(fd); });
}

void MetricsHttpServer::Stop() { loop_->Stop(); }

void MetricsHttpServer::Answer(int fd) {
  const std::string head = ReadHead(fd);
  WriteAll(fd, AnswerMetricsRequest(head, render_));
  ::shutdown(fd, SHUT_WR);
}

}  // namespace bucketfs::tools
