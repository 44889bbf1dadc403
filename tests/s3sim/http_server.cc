#include "tests/s3sim/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/s3sim/body_pool.h"
#include "tests/s3sim/response_writer.h"
#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

constexpr size_t kMaxHead = 64 << 10;

// Buffered reads from one connection.
class ConnReader {
 public:
  explicit ConnReader(int fd) : fd_(fd) {}

  // Reads until "\r\n\r\n"; returns the head without the blank line. Sets
  // *too_big when the head exceeds kMaxHead; returns nullopt on EOF/error.
  std::optional<std::string> ReadHead(bool* too_big) {
    size_t scan = pos_;
    for (;;) {
      size_t end = buf_.find("\r\n\r\n", scan);
      if (end != std::string::npos) {
        std::string head = buf_.substr(pos_, end - pos_);
        pos_ = end + 4;
        Compact();
        return head;
      }
      if (buf_.size() - pos_ > kMaxHead) {
        *too_big = true;
        return std::nullopt;
      }
      scan = buf_.size() >= 3 ? buf_.size() - 3 : 0;
      if (!Fill()) return std::nullopt;
    }
  }

  // Reads exactly n bytes into dst.
  bool ReadExact(char* dst, size_t n) {
    size_t have = std::min(n, buf_.size() - pos_);
    std::memcpy(dst, buf_.data() + pos_, have);
    pos_ += have;
    size_t got = have;
    while (got < n) {
      ssize_t r = recv(fd_, dst + got, n - got, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    Compact();
    return true;
  }

  std::optional<std::string> ReadLine() {
    for (;;) {
      size_t end = buf_.find("\r\n", pos_);
      if (end != std::string::npos) {
        std::string line = buf_.substr(pos_, end - pos_);
        pos_ = end + 2;
        return line;
      }
      if (buf_.size() - pos_ > kMaxHead || !Fill()) return std::nullopt;
    }
  }

 private:
  bool Fill() {
    char tmp[64 << 10];
    for (;;) {
      ssize_t r = recv(fd_, tmp, sizeof tmp, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      buf_.append(tmp, static_cast<size_t>(r));
      return true;
    }
  }
  void Compact() {
    if (pos_ == buf_.size()) {
      buf_.clear();
      pos_ = 0;
    } else if (pos_ > (1 << 20)) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
  }

  int fd_;
  std::string buf_;
  size_t pos_ = 0;
};

// Reads a chunked body (RFC 9112 section 7.1), ignoring extensions and trailers.
bool ReadChunked(ConnReader& in, std::string* body, uint64_t max_body) {
  for (;;) {
    auto line = in.ReadLine();
    if (!line) return false;
    std::string_view size_str(*line);
    size_str = Trim(size_str.substr(0, size_str.find(';')), kSpaceOrTab);
    if (size_str.empty() || size_str.size() > 15) return false;
    uint64_t size = 0;
    for (char c : size_str) {
      char lc = static_cast<char>(c | 0x20);
      int v = (c >= '0' && c <= '9') ? c - '0' : (lc >= 'a' && lc <= 'f') ? lc - 'a' + 10 : -1;
      if (v < 0) return false;
      size = size * 16 + static_cast<uint64_t>(v);
    }
    if (size == 0) break;
    if (body->size() + size > max_body) return false;
    size_t old = body->size();
    body->resize(old + size);
    if (!in.ReadExact(body->data() + old, size)) return false;
    auto crlf = in.ReadLine();
    if (!crlf || !crlf->empty()) return false;
  }
  for (;;) {  // trailers until the empty line
    auto line = in.ReadLine();
    if (!line) return false;
    if (line->empty()) return true;
  }
}

// Reads n bytes, no faster than mbps (10^6 bytes/s) when mbps > 0: the
// per-connection ceiling applies to uploads as well as downloads.
bool ReadPaced(ConnReader& in, char* dst, uint64_t n, double mbps) {
  if (mbps <= 0) return in.ReadExact(dst, n);
  const double rate = mbps * 1e6;
  const uint64_t slice = std::clamp<uint64_t>(static_cast<uint64_t>(rate / 100), 16 << 10, 1 << 20);
  const auto start = std::chrono::steady_clock::now();
  uint64_t got = 0;
  while (got < n) {
    uint64_t k = std::min(slice, n - got);
    if (!in.ReadExact(dst + got, k)) return false;
    got += k;
    std::this_thread::sleep_until(
        start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(static_cast<double>(got) / rate)));
  }
  return true;
}

}  // namespace

HttpServer::HttpServer(ServerConfig config, HttpApp* app) : config_(std::move(config)), app_(app) {}

HttpServer::~HttpServer() {
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int fd : wake_pipe_) {
    if (fd >= 0) close(fd);
  }
}

std::optional<std::string> HttpServer::Listen() {
  if (pipe2(wake_pipe_, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return std::string("socket: ") + std::strerror(errno);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(config_.port));
  if (inet_pton(AF_INET, config_.host.c_str(), &addr.sin_addr) != 1) {
    return "bad listen address " + config_.host;
  }
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return std::string("bind: ") + std::strerror(errno);
  }
  if (listen(listen_fd_, 1024) != 0) return std::string("listen: ") + std::strerror(errno);
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  return std::nullopt;
}

void HttpServer::Run() {
  while (!stopping_) {
    if (config_.max_conns > 0) {  // leave extra connections queued in the backlog
      bucketfs::MutexLock lock(mu_);
      while (!stopping_ && static_cast<int>(conns_.size()) >= config_.max_conns) {
        conns_cv_.Wait(mu_);
      }
      if (stopping_) break;
    }
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0 || stopping_) break;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    {
      bucketfs::MutexLock lock(mu_);
      conns_.insert(fd);
    }
    std::thread([this, fd] { ServeConnection(fd); }).detach();
  }
  bucketfs::MutexLock lock(mu_);
  while (!conns_.empty()) conns_cv_.Wait(mu_);
}

void HttpServer::Stop() {
  stopping_ = true;
  char c = 1;
  [[maybe_unused]] ssize_t r = write(wake_pipe_[1], &c, 1);
  bucketfs::MutexLock lock(mu_);
  for (int fd : conns_) shutdown(fd, SHUT_RDWR);
  conns_cv_.NotifyAll();
}

void HttpServer::ConnectionDone(int fd) {
  bucketfs::MutexLock lock(mu_);
  close(fd);
  conns_.erase(fd);
  conns_cv_.NotifyAll();
}

void HttpServer::ServeConnection(int fd) {
  ConnReader in(fd);
  WriteOptions wopt{config_.ttfb_ms, config_.conn_mbps, config_.stall_ms, &stopping_};
  while (!stopping_) {
    bool too_big = false;
    auto head = in.ReadHead(&too_big);
    if (!head) {
      if (too_big) {
        WriteResponse(fd, app_->ProtocolError(431, "RequestHeaderSectionTooLarge", "head too big"),
                      false, wopt);
      }
      break;
    }
    auto req = ParseRequestHead(*head);
    if (!req) {
      WriteResponse(fd, app_->ProtocolError(400, "BadRequest", "malformed request"), false, wopt);
      break;
    }
    bool keep_alive = req->minor_version == 1;
    if (const std::string* c = req->Header("connection")) {
      std::string v = ToLower(*c);
      if (v == "close") keep_alive = false;
      if (v == "keep-alive") keep_alive = true;
    }

    // Decide how the body is framed before anything else.
    const std::string* te = req->Header("transfer-encoding");
    const std::string* cl = req->Header("content-length");
    bool chunked = false;
    uint64_t content_length = 0;
    if (te != nullptr) {
      if (ToLower(*te) != "chunked") {
        WriteResponse(fd,
                      app_->ProtocolError(501, "NotImplemented",
                                          "Transfer-Encoding " + *te + " is not supported"),
                      false, wopt);
        break;
      }
      chunked = true;
    } else if (cl != nullptr) {
      auto n = ParseU64(*cl);
      if (!n) {
        WriteResponse(fd, app_->ProtocolError(400, "BadRequest", "bad Content-Length"), false,
                      wopt);
        break;
      }
      content_length = *n;
    }
    bool has_body = chunked || content_length > 0;
    if (content_length > config_.max_body) {
      WriteResponse(fd, app_->ProtocolError(400, "EntityTooLarge", "body too large"), false, wopt);
      break;
    }

    if (auto early = app_->Precheck(*req)) {
      // The unread body would desynchronise the stream: close after answering.
      if (!WriteResponse(fd, *early, keep_alive && !has_body, wopt) || has_body) break;
      continue;
    }
    if (const std::string* expect = req->Header("expect")) {
      if (ToLower(*expect) == "100-continue" && has_body) {
        static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (!SendAll(fd, kContinue, sizeof kContinue - 1)) break;
      }
    }
    if (chunked) {
      if (!ReadChunked(in, &req->body, config_.max_body)) break;
    } else if (content_length > 0) {
      req->body = BodyPool::Default().Take(content_length);
      if (!ReadPaced(in, req->body.data(), content_length, config_.conn_mbps)) break;
    }
    HttpResponse resp = app_->Handle(*req);
    BodyPool::Default().Give(std::move(req->body));  // a body the handler did not keep
    if (req->method == "HEAD") resp.head_only = true;
    const bool written = WriteResponse(fd, resp, keep_alive, wopt);
    app_->Sent(resp);
    if (!written) break;
  }
  ConnectionDone(fd);
}

}  // namespace s3sim
