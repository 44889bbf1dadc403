#include "tests/s3sim/response_writer.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <string_view>
#include <thread>

#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kSendSlice = 256 << 10;

// Sends head then body with as few syscalls as the kernel allows.
bool SendTwo(int fd, const char* a, size_t alen, const char* b, size_t blen) {
  iovec iov[2] = {{const_cast<char*>(a), alen}, {const_cast<char*>(b), blen}};
  int idx = alen == 0 ? 1 : 0;
  while (idx < 2) {
    msghdr msg{};
    msg.msg_iov = &iov[idx];
    msg.msg_iovlen = static_cast<size_t>(2 - idx);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    auto left = static_cast<size_t>(n);
    while (idx < 2 && left >= iov[idx].iov_len) {
      left -= iov[idx].iov_len;
      ++idx;
    }
    if (idx < 2) {
      iov[idx].iov_base = static_cast<char*>(iov[idx].iov_base) + left;
      iov[idx].iov_len -= left;
    }
  }
  return true;
}

bool Stopping(const WriteOptions& opt) {
  return opt.stopping != nullptr && opt.stopping->load(std::memory_order_relaxed);
}

// Holds the connection without sending until the peer gives up, the stall
// time passes or the server stops.
void Stall(int fd, const WriteOptions& opt) {
  auto deadline = Clock::now() + std::chrono::milliseconds(opt.stall_ms);
  char sink[4096];
  while (Clock::now() < deadline && !Stopping(opt)) {
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, 100);
    if (r < 0 && errno != EINTR) return;
    if (r > 0) {
      if (p.revents & (POLLHUP | POLLERR)) return;
      ssize_t n = recv(fd, sink, sizeof sink, 0);
      if (n <= 0) return;  // peer closed: it noticed the stall
    }
  }
}

}  // namespace

bool SendAll(int fd, const char* data, size_t len) { return SendTwo(fd, nullptr, 0, data, len); }

bool WriteResponse(int fd, const HttpResponse& resp, bool keep_alive, const WriteOptions& opt) {
  if (opt.ttfb_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt.ttfb_ms));

  const uint64_t length = resp.BodyLength();
  std::string head =
      "HTTP/1.1 " + std::to_string(resp.status) + " " + ReasonPhrase(resp.status) + "\r\n";
  for (const auto& [k, v] : resp.headers) head += k + ": " + v + "\r\n";
  head += "Date: " + HttpDate(std::time(nullptr)) + "\r\n";
  if (resp.status != 304 && resp.status != 204) {
    head += "Content-Length: " + std::to_string(length) + "\r\n";
  }
  bool reuse = keep_alive && !resp.close && resp.fault.kind == BodyFault::Kind::kNone;
  head += reuse ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";

  // The body bytes from position `at` on, up to n of them, within one chunk.
  auto piece = [&resp](uint64_t at, uint64_t n) {
    std::string_view p = resp.data ? resp.data->Piece(resp.data_offset + at)
                                   : std::string_view(resp.body).substr(at);
    return p.substr(0, n);
  };
  uint64_t to_send = (resp.head_only || resp.status == 304 || resp.status == 204) ? 0 : length;
  const bool faulted = resp.fault.kind != BodyFault::Kind::kNone && to_send > 0;
  if (faulted) to_send = std::min(to_send, resp.fault.cut_at);

  // Moderate slices: one huge send() holds the socket lock while ACKs pile up
  // in the backlog, which on loopback runs at a fraction of the speed of
  // 256 KiB - 1 MiB writes. When paced, slices are ~10 ms of the ceiling.
  const bool paced = opt.conn_mbps > 0;
  const double bytes_per_sec = opt.conn_mbps * 1e6;
  const uint64_t slice =
      paced ? std::clamp<uint64_t>(static_cast<uint64_t>(bytes_per_sec / 100), 16 << 10, 1 << 20)
            : kSendSlice;
  std::string_view first = piece(0, std::min(slice, to_send));
  bool ok = SendTwo(fd, head.data(), head.size(), first.data(), first.size());
  uint64_t sent = first.size();
  const auto start = Clock::now();
  while (ok && sent < to_send && !Stopping(opt)) {
    if (paced) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(static_cast<double>(sent) / bytes_per_sec)));
    }
    std::string_view p = piece(sent, std::min(slice, to_send - sent));
    if (p.empty()) break;  // the body is shorter than announced (cannot happen)
    ok = SendAll(fd, p.data(), p.size());
    sent += p.size();
  }
  ok = ok && sent == to_send;
  if (!ok) return false;

  if (faulted) {
    switch (resp.fault.kind) {
      case BodyFault::Kind::kReset: {
        linger lg{1, 0};  // close() sends RST instead of FIN
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        return false;
      }
      case BodyFault::Kind::kTruncate:
        shutdown(fd, SHUT_WR);
        return false;
      case BodyFault::Kind::kStall:
        Stall(fd, opt);
        return false;
      case BodyFault::Kind::kNone:
        break;
    }
  }
  return reuse;
}

}  // namespace s3sim
