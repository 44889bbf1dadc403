#include "mount-tools/accept_loop.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace bucketfs::tools {

Result<std::unique_ptr<AcceptLoop>> AcceptLoop::Create(int listen_fd) {
  const int wake = ::eventfd(0, EFD_CLOEXEC);
  if (wake < 0) {
    const int e = errno;
    ::close(listen_fd);
    return MakeError(e, "AcceptLoop", std::string("eventfd: ") + std::strerror(e));
  }
  return std::unique_ptr<AcceptLoop>(new AcceptLoop(listen_fd, wake));
}

AcceptLoop::~AcceptLoop() {
  Stop();
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void AcceptLoop::Start(std::function<void(int conn_fd)> serve) {
  serve_ = std::move(serve);
  thread_ = std::thread([this] { Run(); });
}

void AcceptLoop::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

void AcceptLoop::Run() {
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
    serve_(fd);
    ::close(fd);
  }
}

}  // namespace bucketfs::tools
