// SystemdNotifier and ServiceNotifier against a real datagram socket bound
// where NOTIFY_SOCKET points, as systemd listens; no FUSE: the "mountpoint"
// is a plain directory, which a stat answers at once.
#include "mount-tools/service_notifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "mount-tools/systemd_notify.h"

namespace bucketfs::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class NotifySocket {
 public:
  NotifySocket() {
    char tmpl[] = "/tmp/notify_test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/notify.sock";
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::close(fd_);
    std::filesystem::remove_all(dir_);
  }
  // The next datagram, or "" after `timeout_ms`.
  std::string Receive(int timeout_ms = 5000) const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return "";
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, path_;
  int fd_ = -1;
};

TEST(SystemdNotifierTest, NothingWithoutNotifySocket) {
  ::unsetenv("NOTIFY_SOCKET");
  SystemdNotifier n;
  EXPECT_FALSE(n.enabled());
  EXPECT_FALSE(n.Notify("READY=1"));
  EXPECT_FALSE(n.watchdog_period().has_value());
}

TEST(SystemdNotifierTest, SendsToTheSocket) {
  NotifySocket socket;
  SystemdNotifier n;
  ASSERT_TRUE(n.enabled());
  EXPECT_TRUE(n.Notify("READY=1\nSTATUS=hello"));
  EXPECT_EQ(socket.Receive(), "READY=1\nSTATUS=hello");
  EXPECT_FALSE(SystemdNotifier::Disabled().Notify("READY=1"));
  EXPECT_EQ(socket.Receive(200), "");
}

TEST(SystemdNotifierTest, WatchdogPeriodIsHalfTheTimeout) {
  NotifySocket socket;
  ::setenv("WATCHDOG_USEC", "4000000", 1);
  ::unsetenv("WATCHDOG_PID");
  SystemdNotifier n;
  ASSERT_TRUE(n.watchdog_period().has_value());
  EXPECT_EQ(*n.watchdog_period(), std::chrono::seconds(2));
}

TEST(ServiceNotifierTest, ReadyThenStatusWithRatesThenStopping) {
  NotifySocket socket;
  const SystemdNotifier systemd;
  std::atomic<uint64_t> read{0};
  ServiceNotifier notifier(systemd,
                           {.mountpoint = socket.dir(),
                            .source = "s3://b/p",
                            .status_period = std::chrono::milliseconds(200)},
                           [&] {
                             return fs::IoCountersSnapshot{read.load(), 0, 2};
                           });
  notifier.MountReported();
  EXPECT_EQ(socket.Receive(), "READY=1\nSTATUS=serving s3://b/p at " + socket.dir() +
                                  ": read 0 B/s, wrote 0 B/s, 2 errors");
  read = 100'000'000;  // ~0.2 s later: about 500 MB/s
  const std::string status = socket.Receive();
  EXPECT_THAT(status, StartsWith("STATUS=serving s3://b/p at "));
  EXPECT_THAT(status, HasSubstr(" MB/s, wrote 0 B/s, 2 errors"));
  notifier.Stopping(SIGTERM);
  std::string stopping;
  for (int i = 0; i < 5 && stopping.rfind("STOPPING=1", 0) != 0; ++i) stopping = socket.Receive();
  EXPECT_THAT(stopping, StartsWith("STOPPING=1\nSTATUS=stopping (signal Terminated)"));
  notifier.Stop();
}

TEST(ServiceNotifierTest, NoReadyWhileTheMountpointDoesNotAnswer) {
  NotifySocket socket;
  const SystemdNotifier systemd;
  ServiceNotifier notifier(systemd, {.mountpoint = socket.dir() + "/missing", .source = "s3://b"},
                           [] { return fs::IoCountersSnapshot{}; });
  notifier.MountReported();
  EXPECT_EQ(socket.Receive(300), "");
  notifier.Stop();  // returns although the stat never succeeded
  EXPECT_EQ(socket.Receive(100), "");
}

TEST(ServiceNotifierTest, Rates) {
  EXPECT_EQ(ServiceNotifier::ShowRate(0), "0 B/s");
  EXPECT_EQ(ServiceNotifier::ShowRate(999), "999 B/s");
  EXPECT_EQ(ServiceNotifier::ShowRate(1500), "1.5 kB/s");
  EXPECT_EQ(ServiceNotifier::ShowRate(120e6), "120 MB/s");
  EXPECT_EQ(ServiceNotifier::ShowRate(2.5e9), "2.5 GB/s");
}

}  // namespace
}  // namespace bucketfs::tools
