#include "mount-tools/control_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace bucketfs::tools {
namespace {

constexpr size_t kMaxLine = 4096;
constexpr int kIdleTimeoutMs = 10000;  // a silent client must not hold the socket for long

Result<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return MakeError(ENAMETOOLONG, "ControlSocket",
                     "control socket path too long for a Unix socket: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// A connected socket to `path`, or the connect error.
Result<int> Connect(const std::string& path) {
  auto addr = UnixAddress(path);
  if (!addr.ok()) return addr.error();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(errno, "ControlSocket", std::strerror(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    const int e = errno;
    ::close(fd);
    return MakeError(e, "ControlSocket", path + ": " + std::strerror(e));
  }
  return fd;
}

// Sends all of `data`; the first chunk carries `fds` (SCM_RIGHTS), if any.
bool SendAll(int fd, std::string_view data, const std::vector<int>& fds) {
  bool fds_sent = fds.empty();
  while (!data.empty()) {
    iovec iov{const_cast<char*>(data.data()), data.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control;
    if (!fds_sent) {
      control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    fds_sent = true;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Receives what is there; descriptors that came with it go to `fds`.
ssize_t ReceiveSome(int fd, char* buf, size_t size, std::vector<int>& fds) {
  iovec iov{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received = -1;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.push_back(received);
    }
  }
  return n;
}

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) ::close(fd);
  fds.clear();
}

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::Listen(const std::string& path) {
  auto addr = UnixAddress(path);
  if (!addr.ok()) return addr.error();
  if (auto live = Connect(path); live.ok()) {
    ::close(*live);
    return MakeError(EADDRINUSE, "ControlSocket",
                     path + ": another bucketfs answers on this control socket");
  } else if (live.error().errno_value == ECONNREFUSED) {
    ::unlink(path.c_str());  // left by a daemon that died
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(errno, "ControlSocket", std::strerror(errno));
  // Owner only: the socket tells what is mounted and will accept commands that change it.
  const mode_t old_mask = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr));
  const int bind_errno = errno;
  ::umask(old_mask);
  if (bound != 0 || ::listen(fd, 8) != 0) {
    const int e = bound != 0 ? bind_errno : errno;
    ::close(fd);
    return MakeError(e, "ControlSocket", path + ": " + std::strerror(e));
  }
  auto loop = AcceptLoop::Create(fd);
  if (!loop.ok()) {
    ::unlink(path.c_str());
    return loop.error();
  }
  return std::unique_ptr<ControlServer>(new ControlServer(path, std::move(*loop)));
}

ControlServer::ControlServer(std::string path, std::unique_ptr<AcceptLoop> loop)
    : path_(std::move(path)), loop_(std::move(loop)) {}

ControlServer::~ControlServer() {
  Stop();
  ::unlink(path_.c_str());
}

void ControlServer::Register(const std::string& command, Handler handler) {
  handlers_[command] = std::move(handler);
}

void ControlServer::Start() {
  if (handlers_.find("help") == handlers_.end()) {
    Register("help", [this](const ControlRequest&, int) -> Result<ControlAnswer> {
      std::string out;
      for (const auto& [name, unused] : handlers_) out += "command=" + name + "\n";
      return ControlAnswer(out);
    });
  }
  loop_->Start([this](int fd) { Converse(fd); });
}

void ControlServer::Stop() { loop_->Stop(); }

void ControlServer::Converse(int fd) {
  std::string pending;
  char buf[1024];
  for (;;) {
    size_t eol;
    while ((eol = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      Result<ControlAnswer> answer = Dispatch(line);
      const std::string text =
          FormatControlReply(answer.ok() ? Result<std::string>(answer->body) : answer.error());
      if (!SendAll(fd, text, answer.ok() ? answer->fds : std::vector<int>())) return;
    }
    if (pending.size() > kMaxLine) return;
    pollfd p[2] = {{fd, POLLIN, 0}, {loop_->stop_fd(), POLLIN, 0}};
    if (::poll(p, 2, kIdleTimeoutMs) <= 0 || p[1].revents != 0) return;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    pending.append(buf, static_cast<size_t>(n));
  }
}

Result<ControlAnswer> ControlServer::Dispatch(const std::string& line) {
  auto request = ParseControlLine(line);
  if (!request.ok()) return request.error();
  auto it = handlers_.find(request->command);
  if (it == handlers_.end()) {
    return MakeError(EINVAL, "UnknownCommand",
                     "unknown command '" + request->command + "' (try help)");
  }
  return it->second(*request, loop_->stop_fd());
}

Result<ControlAnswer> CallControl(const std::string& path, const std::string& command,
                                  int timeout_ms) {
  auto fd = Connect(path);
  if (!fd.ok()) return fd.error();
  std::string text;
  std::vector<int> fds;
  bool complete = false;
  bool timed_out = false;
  if (SendAll(*fd, command + "\n", {})) {
    char buf[4096];
    while (text.find("\n\n") == std::string::npos) {
      pollfd p{*fd, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) {
        timed_out = true;
        break;
      }
      const ssize_t n = ReceiveSome(*fd, buf, sizeof(buf), fds);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(*fd);
  Result<std::string> body = ParseControlReply(text, &complete);
  if (!complete && timed_out) {
    body = MakeError(ETIMEDOUT, "ControlSocket",
                     path + ": no complete reply to '" + command + "' within " +
                         std::to_string(timeout_ms / 1000) + " s");
  }
  if (!body.ok()) {
    CloseAll(fds);
    return body.error();
  }
  return ControlAnswer(std::move(*body), std::move(fds));
}

Result<std::string> SendControlCommand(const std::string& path, const std::string& command) {
  auto answer = CallControl(path, command, kIdleTimeoutMs);
  if (!answer.ok()) return answer.error();
  CloseAll(answer->fds);
  return std::move(answer->body);
}

}  // namespace bucketfs::tools
