#include "mount-tools/control_socket.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "metrics/registry.h"
#include "mount-tools/control_paths.h"
#include "mount-tools/control_protocol.h"
#include "mount-tools/status_snapshot.h"

namespace bucketfs::tools {
namespace {

class ControlSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bucketfs-ctl-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/m.sock";
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string dir_, path_;
};

TEST(ControlProtocol, LinesAndReplies) {
  auto r = ParseControlLine("status  --json x\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->command, "status");
  EXPECT_EQ(r->args, (std::vector<std::string>{"--json", "x"}));
  EXPECT_FALSE(ParseControlLine("  \n").ok());

  EXPECT_EQ(FormatControlReply(std::string("a=1\n\nb=2")), "ok\na=1\nb=2\n\n");
  EXPECT_EQ(FormatControlReply(MakeError(EINVAL, "X", "bad\nthing")), "error bad thing\n\n");
  bool complete = false;
  auto body = ParseControlReply("ok\na=1\nb=2\n\n", &complete);
  ASSERT_TRUE(body.ok());
  EXPECT_TRUE(complete);
  EXPECT_EQ(*body, "a=1\nb=2\n");
  EXPECT_EQ(*ParseControlReply("ok\n\n", &complete), "");
  auto err = ParseControlReply("error no such thing\n\n", &complete);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().message, "no such thing");
  EXPECT_FALSE(ParseControlReply("ok\na=1\n", &complete).ok());
  EXPECT_FALSE(complete);
  EXPECT_EQ(ParseKeyValues("a=1\nb=x=y\nnoise\n"),
            (std::map<std::string, std::string>{{"a", "1"}, {"b", "x=y"}}));
}

TEST(ControlPaths, EscapeAndDirectories) {
  EXPECT_EQ(EscapeMountpoint("/mnt/data"), "mnt-data");
  EXPECT_EQ(EscapeMountpoint("/mnt/my data/"), "mnt-my\\x20data");
  EXPECT_EQ(EscapeMountpoint("/"), "-");
  EXPECT_EQ(EscapeMountpoint("/a-b/.x"), "a\\x2db-.x");
  EXPECT_EQ(EscapeMountpoint("/.hidden"), "\\x2ehidden");
  for (const char* p : {"/mnt/data", "/mnt/my data", "/a-b/.x", "/"}) {
    EXPECT_EQ(UnescapeMountpoint(EscapeMountpoint(p)), p);
  }
  EXPECT_EQ(ControlSocketDirFor(0, "/run/user/0"), "/run/bucketfs");
  EXPECT_EQ(ControlSocketDirFor(1000, "/run/user/1000"), "/run/user/1000/bucketfs");
  EXPECT_EQ(ControlSocketDirFor(1000, ""), "/tmp/bucketfs-1000");
  EXPECT_EQ(ControlSocketPath("/run/bucketfs", "/mnt/x"), "/run/bucketfs/mnt-x.sock");
}

TEST_F(ControlSocketTest, DispatchesRegisteredCommandsOverARealSocket) {
  auto server = ControlServer::Listen(path_);
  ASSERT_TRUE(server.ok()) << server.error().message;
  (*server)->Register("echo", [](const ControlRequest& r, int stop_fd) -> Result<ControlAnswer> {
    EXPECT_GE(stop_fd, 0);
    std::string out;
    for (const auto& a : r.args) out += "arg=" + a + "\n";
    return ControlAnswer(out);
  });
  (*server)->Start();
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto echo = SendControlCommand(path_, "echo a b");
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  EXPECT_EQ(*echo, "arg=a\narg=b\n");
  auto help = SendControlCommand(path_, "help");
  ASSERT_TRUE(help.ok());
  EXPECT_NE(help->find("command=echo\n"), std::string::npos);
  auto unknown = SendControlCommand(path_, "upgrade");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown command 'upgrade'"), std::string::npos);

  // A second server on a live socket is refused; after Stop the file goes.
  EXPECT_EQ(ControlServer::Listen(path_).error().errno_value, EADDRINUSE);
  server->reset();
  EXPECT_NE(::access(path_.c_str(), F_OK), 0);
}

TEST_F(ControlSocketTest, AReplyCarriesDescriptors) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  auto server = ControlServer::Listen(path_);
  ASSERT_TRUE(server.ok()) << server.error().message;
  (*server)->Register("give", [&](const ControlRequest&, int) -> Result<ControlAnswer> {
    return ControlAnswer("count=1\n", {pipe_fds[1]});
  });
  (*server)->Start();
  auto answer = CallControl(path_, "give", 5000);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->body, "count=1\n");
  ASSERT_EQ(answer->fds.size(), 1u);
  // The received descriptor is the pipe's write end: what goes in comes out.
  ASSERT_EQ(::write(answer->fds[0], "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(pipe_fds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  for (int fd : answer->fds) ::close(fd);
  // SendControlCommand closes what it is given.
  auto body = SendControlCommand(path_, "give");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body, "count=1\n");
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_F(ControlSocketTest, ASlowReplyTimesOut) {
  auto server = ControlServer::Listen(path_);
  ASSERT_TRUE(server.ok()) << server.error().message;
  (*server)->Register("slow", [](const ControlRequest&, int stop_fd) -> Result<ControlAnswer> {
    pollfd p{stop_fd, POLLIN, 0};
    ::poll(&p, 1, 5000);  // until the server stops
    return ControlAnswer("late=1\n");
  });
  (*server)->Start();
  auto answer = CallControl(path_, "slow", 200);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().errno_value, ETIMEDOUT);
  server->reset();  // Stop wakes the waiting handler
}

TEST_F(ControlSocketTest, AStaleSocketRefusesAndIsReplaced) {
  // A socket file nobody listens on: what a daemon that died leaves.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path_.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  EXPECT_EQ(SendControlCommand(path_, "status").error().errno_value, ECONNREFUSED);
  auto server = ControlServer::Listen(path_);
  ASSERT_TRUE(server.ok()) << server.error().message;
}

TEST_F(ControlSocketTest, StatusSnapshotSummarizesTheRegistry) {
  metrics::Registry r;
  r.GetCounter("bucketfs_fuse_read_bytes_total", "").Add(3000000);
  r.GetCounter("bucketfs_s3_requests_total", "", {{"op", "GET"}, {"status", "206"}}).Add(7);
  r.GetCounter("bucketfs_s3_requests_total", "", {{"op", "GET"}, {"status", "503"}}).Add(1);
  r.GetGauge("bucketfs_s3_requests_in_flight", "", {{"op", "GET"}}).Set(2);
  r.GetCounter("bucketfs_fuse_errors_total", "", {{"op", "lookup"}, {"errno", "ENOENT"}}).Add(5);
  r.GetCounter("bucketfs_fuse_errors_total", "", {{"op", "lookup"}, {"errno", "EIO"}}).Add(1);
  r.GetCounter("bucketfs_fuse_errors_total", "", {{"op", "read"}, {"errno", "ENOENT"}}).Add(2);
  const auto t0 = std::chrono::steady_clock::now();
  MountIdentity id{"/mnt/x", "s3://b", 42, t0};
  const Snapshot before = ParseKeyValues(StatusSnapshotText(r, id, t0));
  r.GetCounter("bucketfs_fuse_read_bytes_total", "").Add(2000000);
  const Snapshot now = ParseKeyValues(StatusSnapshotText(r, id, t0 + std::chrono::seconds(2)));
  EXPECT_EQ(now.at("fuse_read_bytes"), "5000000");
  EXPECT_EQ(now.at("s3_requests.GET"), "8");
  EXPECT_EQ(now.at("s3_failed"), "1");
  EXPECT_EQ(now.at("s3_in_flight"), "2");
  EXPECT_EQ(now.at("fuse_errors"), "3") << "lookups of absent names are answers, not errors";
  const std::string text = RenderStatus(now, &before);
  EXPECT_NE(text.find("/mnt/x  s3://b  pid 42  up 2s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  read           1.0 MB/s"), std::string::npos) << text;
}

}  // namespace
}  // namespace bucketfs::tools
