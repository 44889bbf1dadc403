#include "mount-tools/daemonize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace bucketfs::tools {
namespace {

using ::testing::HasSubstr;

TEST(MountResultWireTest, RoundTrip) {
  EXPECT_EQ(DecodeMountResult(EncodeMountResult(Status::Ok())), "");
  Status bad = MakeError(ENOENT, "NoSuchBucket", "bucket 'x' does not exist");
  EXPECT_EQ(DecodeMountResult(EncodeMountResult(bad)), "bucket 'x' does not exist");
  EXPECT_THAT(DecodeMountResult(""), HasSubstr("ended before it reported"));
  EXPECT_THAT(DecodeMountResult("error:"), HasSubstr("failed"));
}

TEST(RunDetachedTest, ParentExitsZeroOnceChildReportsSuccess) {
  int code = RunDetached([](MountResultReporter& r) {
    r.Report(Status::Ok());
    r.Report(MakeError(EIO, "X", "ignored: only the first report counts"));
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(RunDetachedTest, ChildRunsInItsOwnSessionInRoot) {
  // The child reports failure unless it is detached as documented.
  int code = RunDetached([](MountResultReporter& r) {
    char cwd[256];
    bool in_root = ::getcwd(cwd, sizeof(cwd)) != nullptr && std::string(cwd) == "/";
    bool leader = ::getsid(0) == ::getpid();
    r.Report(in_root && leader ? Status::Ok() : Status(MakeError(EIO, "X", "not detached")));
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(RunDetachedTest, ReportedErrorIsPrinted) {
  testing::internal::CaptureStderr();
  int code = RunDetached([](MountResultReporter& r) {
    r.Report(MakeError(ENOENT, "NoSuchBucket", "bucket 'x' does not exist"));
    return 1;
  });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("bucketfs: bucket 'x' does not exist"));
}

TEST(RunDetachedTest, ChildReturningWithoutReportFails) {
  testing::internal::CaptureStderr();
  int code = RunDetached([](MountResultReporter&) { return 3; });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("exit status 3"));
}

TEST(RunDetachedTest, ChildCrashBeforeReportFails) {
  testing::internal::CaptureStderr();
  int code = RunDetached([](MountResultReporter&) -> int {
    std::signal(SIGABRT, SIG_DFL);
    ::kill(::getpid(), SIGKILL);
    return 0;
  });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("killed by signal 9"));
}

}  // namespace
}  // namespace bucketfs::tools
