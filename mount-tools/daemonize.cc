#include "mount-tools/daemonize.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bucketfs::tools {
namespace {

constexpr char kOk[] = "ok";
constexpr char kErrorTag[] = "error:";

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // parent gone: nothing left to tell
    done += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void RedirectTo(const char* path, int target_fd, int flags) {
  int fd = ::open(path, flags | O_CLOEXEC);
  if (fd < 0) return;
  if (fd != target_fd) {
    ::dup2(fd, target_fd);  // dup2 clears FD_CLOEXEC on target_fd
    ::close(fd);
  }
}

std::string DescribeExit(int wstatus) {
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus)) {
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(wstatus)) + " (" +
           strsignal(WTERMSIG(wstatus)) + ")";
  }
  return "ended";
}

}  // namespace

MountResultReporter::~MountResultReporter() {
  if (fd_ >= 0 && !reported_.exchange(true)) ::close(fd_);
}

void MountResultReporter::Report(const Status& status) {
  if (reported_.exchange(true) || fd_ < 0) return;
  WriteAll(fd_, EncodeMountResult(status));
  ::close(fd_);
  if (status.ok() && silence_stderr_) RedirectTo("/dev/null", STDERR_FILENO, O_WRONLY);
}

std::string EncodeMountResult(const Status& status) {
  if (status.ok()) return kOk;
  return std::string(kErrorTag) + status.error().message;
}

std::string DecodeMountResult(const std::string& wire) {
  if (wire == kOk) return "";
  if (wire.rfind(kErrorTag, 0) == 0) {
    std::string message = wire.substr(sizeof(kErrorTag) - 1);
    return message.empty() ? "mounting failed" : message;
  }
  return "the mount process ended before it reported whether mounting worked";
}

int RunDetached(const std::function<int(MountResultReporter&)>& child_main) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "bucketfs: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  std::fflush(nullptr);  // or buffered output would be written twice
  pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "bucketfs: fork: %s\n", std::strerror(errno));
    ::close(fds[0]);
    ::close(fds[1]);
    return 1;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::setsid();
    // A reader that quit must not kill us with SIGPIPE on the report pipe.
    std::signal(SIGPIPE, SIG_IGN);
    if (::chdir("/") != 0) {
      // Unreachable in practice; staying put only keeps a directory busy.
    }
    RedirectTo("/dev/null", STDIN_FILENO, O_RDONLY);
    RedirectTo("/dev/null", STDOUT_FILENO, O_WRONLY);
    int code;
    {
      MountResultReporter reporter(fds[1], /*silence_stderr_on_success=*/true);
      code = child_main(reporter);
      if (!reporter.reported()) {
        reporter.Report(MakeError(
            EIO, "MountFailed",
            "mounting ended without a result (exit status " + std::to_string(code) + ")"));
      }
    }
    std::fflush(nullptr);
    std::exit(code);
  }
  ::close(fds[1]);
  std::string message = DecodeMountResult(ReadAll(fds[0]));
  ::close(fds[0]);
  if (message.empty()) return 0;
  std::string reason = message;
  if (reason.rfind("the mount process ended", 0) == 0) {
    // The pipe closed without a report: the child has exited (or is about
    // to), so this wait is short. After a reported error we do not wait.
    int wstatus = 0;
    pid_t waited;
    do {
      waited = ::waitpid(pid, &wstatus, 0);
    } while (waited < 0 && errno == EINTR);
    if (waited == pid) reason += " (it " + DescribeExit(wstatus) + ")";
  }
  std::fprintf(stderr, "bucketfs: %s\n", reason.c_str());
  return 1;
}

}  // namespace bucketfs::tools
