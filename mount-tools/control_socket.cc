#include "mount-tools/control_socket.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
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
  const int wake = ::eventfd(0, EFD_CLOEXEC);
  if (wake < 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return MakeError(e, "ControlSocket", std::string("eventfd: ") + std::strerror(e));
  }
  return std::unique_ptr<ControlServer>(new ControlServer(path, fd, wake));
}

ControlServer::ControlServer(std::string path, int listen_fd, int wake_fd)
    : path_(std::move(path)), listen_fd_(listen_fd), wake_fd_(wake_fd) {}

ControlServer::~ControlServer() {
  Stop();
  ::close(listen_fd_);
  ::close(wake_fd_);
  ::unlink(path_.c_str());
}

void ControlServer::Register(const std::string& command, Handler handler) {
  handlers_[command] = std::move(handler);
}

void ControlServer::Start() {
  if (handlers_.find("help") == handlers_.end()) {
    Register("help", [this](const ControlRequest&, int) -> Result<std::string> {
      std::string out;
      for (const auto& [name, unused] : handlers_) out += "command=" + name + "\n";
      return out;
    });
  }
  thread_ = std::thread([this] { Serve(); });
}

void ControlServer::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

void ControlServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Converse(fd);
    ::close(fd);
  }
}

void ControlServer::Converse(int fd) {
  std::string pending;
  char buf[1024];
  for (;;) {
    size_t eol;
    while ((eol = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      if (!WriteAll(fd, Dispatch(line, fd))) return;
    }
    if (pending.size() > kMaxLine) return;
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(p, 2, kIdleTimeoutMs) <= 0 || p[1].revents != 0) return;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    pending.append(buf, static_cast<size_t>(n));
  }
}

std::string ControlServer::Dispatch(const std::string& line, int fd) {
  auto request = ParseControlLine(line);
  if (!request.ok()) return FormatControlReply(request.error());
  auto it = handlers_.find(request->command);
  if (it == handlers_.end()) {
    return FormatControlReply(MakeError(EINVAL, "UnknownCommand",
                                        "unknown command '" + request->command + "' (try help)"));
  }
  return FormatControlReply(it->second(*request, fd));
}

Result<std::string> SendControlCommand(const std::string& path, const std::string& command) {
  auto fd = Connect(path);
  if (!fd.ok()) return fd.error();
  std::string text;
  bool complete = false;
  if (WriteAll(*fd, command + "\n")) {
    char buf[4096];
    for (;;) {
      pollfd p{*fd, POLLIN, 0};
      if (::poll(&p, 1, kIdleTimeoutMs) <= 0) break;
      const ssize_t n = ::recv(*fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (text.find("\n\n") != std::string::npos) break;
    }
  }
  ::close(*fd);
  return ParseControlReply(text, &complete);
}

}  // namespace bucketfs::tools
