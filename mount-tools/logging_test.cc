#include "mount-tools/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace bucketfs::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LoggingTest, ChoosesDestination) {
  LogSettings s;
  EXPECT_EQ(ChooseLogDestination(s, false), LogDestination::kStderr);
  EXPECT_EQ(ChooseLogDestination(s, true), LogDestination::kDiscard);
  s.file = "/tmp/x";
  EXPECT_EQ(ChooseLogDestination(s, false), LogDestination::kFile);
  EXPECT_EQ(ChooseLogDestination(s, true), LogDestination::kFile);
}

TEST(LoggingTest, FileGetsLinesAtOrAboveTheLevelAndIsPrivate) {
  char tmpl[] = "/tmp/logging_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string file = std::string(tmpl) + "/bucketfs.log";
  LogSettings s{.level = spdlog::level::info, .file = file};
  ASSERT_TRUE(SetUpLogging(s, LogDestination::kFile, /*redirect_stderr=*/false).ok());
  spdlog::debug("hidden line");
  spdlog::info("visible line {}", 42);
  spdlog::error("an error");
  FlushLogging();
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("visible line 42"));
  EXPECT_THAT(text.str(), HasSubstr("an error"));
  EXPECT_THAT(text.str(), Not(HasSubstr("hidden line")));
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Back to stderr so later tests do not write into a deleted file.
  ASSERT_TRUE(SetUpLogging(LogSettings{}, LogDestination::kStderr, false).ok());
  ::unlink(file.c_str());
  ::rmdir(tmpl);
}

TEST(LoggingTest, UnwritableFileIsAnError) {
  LogSettings s{.level = spdlog::level::info, .file = "/nonexistent-dir/x.log"};
  Status st = SetUpLogging(s, LogDestination::kFile, false);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("/nonexistent-dir/x.log"));
}

}  // namespace
}  // namespace bucketfs::tools
