#include "mount-tools/mount_upgrade.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace bucketfs::tools {
namespace {

TEST(UpgradeHandoffTest, RoundTripsAnyByteButNul) {
  UpgradeHandoff h{"/home/a b",
                   {"bucketfs", "s3://b", "/mnt/x y\n=", "-o", "ro"},
                   {"AWS_REGION=eu-west-1", "ODD=\x01\xff"}};
  auto parsed = ParseUpgradeHandoff(FormatUpgradeHandoff(h));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->cwd, h.cwd);
  EXPECT_EQ(parsed->args, h.args);
  EXPECT_EQ(parsed->env, h.env);
}

TEST(UpgradeHandoffTest, RefusesBadOrIncompleteAnswers) {
  EXPECT_FALSE(ParseUpgradeHandoff("cwd=2f\narg=zz\n").ok());
  EXPECT_FALSE(ParseUpgradeHandoff("cwd=2f\narg=6\n").ok());
  // No arguments: the successor could not start like the daemon did.
  EXPECT_FALSE(ParseUpgradeHandoff("cwd=2f\n").ok());
  EXPECT_TRUE(ParseUpgradeHandoff("cwd=2f\narg=61\narg=62\nextra=ff\n").ok());
}

TEST(TakeUpgradeFdsTest, ReadsAndUnsetsTheVariable) {
  ::unsetenv(kTakeoverFdsEnv);
  auto none = TakeUpgradeFds();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const std::string value = "fuse=" + std::to_string(p[0]) + ",journal=" + std::to_string(p[1]);
  ::setenv(kTakeoverFdsEnv, value.c_str(), 1);
  auto fds = TakeUpgradeFds();
  ASSERT_TRUE(fds.ok()) << fds.error().message;
  EXPECT_EQ(fds->at("fuse"), p[0]);
  EXPECT_EQ(fds->at("journal"), p[1]);
  EXPECT_EQ(std::getenv(kTakeoverFdsEnv), nullptr);
  // Close-on-exec from now on: children of the daemon must not hold the mount.
  EXPECT_NE(::fcntl(p[0], F_GETFD) & FD_CLOEXEC, 0);
  ::close(p[0]);
  ::close(p[1]);
}

TEST(TakeUpgradeFdsTest, RefusesDescriptorsThatAreNotOpen) {
  ::setenv(kTakeoverFdsEnv, "fuse=999999,journal=x", 1);
  auto fds = TakeUpgradeFds();
  ASSERT_FALSE(fds.ok());
  EXPECT_NE(fds.error().message.find("NAME=OPEN_FD"), std::string::npos);
  EXPECT_EQ(std::getenv(kTakeoverFdsEnv), nullptr);
}

}  // namespace
}  // namespace bucketfs::tools
