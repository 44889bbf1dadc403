#include "mount-tools/env_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace bucketfs::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EnvFile ParseOk(std::string_view text) {
  auto parsed = ParseEnvFile(text, "f.env");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : EnvFile{};
}

std::string ParseError(std::string_view text) {
  auto parsed = ParseEnvFile(text, "f.env");
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? "" : parsed.error().message;
}

TEST(EnvFileTest, PlainQuotedExportedAndComments) {
  EnvFile f = ParseOk(
      "# credentials\n"
      "\n"
      "AWS_ACCESS_KEY_ID=AKIDEXAMPLE\n"
      "export AWS_SECRET_ACCESS_KEY = 'se#cr\"et' \n"
      "  AWS_REGION=\"eu-west-1\"  # inline comment after quotes\n"
      "AWS_ENDPOINT_URL=http://127.0.0.1:9000\r\n"
      "AWS_SESSION_TOKEN=\"a\\\"b\\\\c\\nd\"\n"
      "BUCKETFS_OPTIONS=allow_delete,ro\n"
      "AWS_PROFILE=");
  ASSERT_EQ(f.settings.size(), 7u);
  EXPECT_EQ(f.settings[0].key, "AWS_ACCESS_KEY_ID");
  EXPECT_EQ(f.settings[0].value, "AKIDEXAMPLE");
  EXPECT_EQ(f.settings[0].line, 3);
  EXPECT_EQ(f.settings[1].key, "AWS_SECRET_ACCESS_KEY");
  EXPECT_EQ(f.settings[1].value, "se#cr\"et");
  EXPECT_EQ(f.settings[2].value, "eu-west-1");
  EXPECT_EQ(f.settings[3].value, "http://127.0.0.1:9000");
  EXPECT_EQ(f.settings[4].value, "a\"b\\c\nd");
  EXPECT_EQ(f.settings[5].value, "allow_delete,ro");
  EXPECT_EQ(f.settings[6].value, "");
  EXPECT_TRUE(f.warnings.empty());
}

TEST(EnvFileTest, UnknownKeysWarnWithLineNumbers) {
  EnvFile f = ParseOk("AWS_REGION=x\nAWS_SECRET_KEY=oops\n");
  ASSERT_EQ(f.settings.size(), 1u);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_EQ(f.warnings[0], "f.env:2: unknown key 'AWS_SECRET_KEY' (ignored)");
}

TEST(EnvFileTest, MalformedLinesNameTheLineAndNeverTheValue) {
  EXPECT_EQ(ParseError("AWS_REGION=x\njust some text\n"), "f.env:2: expected KEY=VALUE");
  EXPECT_EQ(ParseError("1ABC=x\n"), "f.env:1: '1ABC' is not a variable name");
  EXPECT_EQ(ParseError("=x\n"), "f.env:1: '' is not a variable name");
  const std::string unterminated = ParseError("\n\nAWS_SECRET_ACCESS_KEY='topsecret\n");
  EXPECT_THAT(unterminated, HasSubstr("f.env:3: unterminated single quote"));
  EXPECT_THAT(unterminated, Not(HasSubstr("topsecret")));
  const std::string trailing = ParseError("AWS_SECRET_ACCESS_KEY=\"topsecret\" more\n");
  EXPECT_THAT(trailing, HasSubstr("f.env:1: text after the closing quote"));
  EXPECT_THAT(trailing, Not(HasSubstr("topsecret")));
}

TEST(EnvFileTest, FileWinsAndKeysNeverPairAcrossSources) {
  s3::EnvMap env = {{"AWS_ACCESS_KEY_ID", "old"},
                    {"AWS_SESSION_TOKEN", "old-token"},
                    {"AWS_REGION", "us-east-1"},
                    {"HOME", "/root"}};
  MergeEnvFile(ParseOk("AWS_ACCESS_KEY_ID=new\nAWS_SECRET_ACCESS_KEY=s\n"), env);
  EXPECT_EQ(env["AWS_ACCESS_KEY_ID"], "new");
  EXPECT_EQ(env["AWS_SECRET_ACCESS_KEY"], "s");
  EXPECT_EQ(env.count("AWS_SESSION_TOKEN"), 0u);
  EXPECT_EQ(env["AWS_REGION"], "us-east-1");
  EXPECT_EQ(env["HOME"], "/root");

  s3::EnvMap keep = {{"AWS_SESSION_TOKEN", "t"}};
  MergeEnvFile(ParseOk("AWS_REGION=eu-west-1\n"), keep);
  EXPECT_EQ(keep["AWS_SESSION_TOKEN"], "t");
}

class EnvFileOnDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/env_file_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/s3.env";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& text, mode_t mode) {
    std::ofstream(path_) << text;
    ASSERT_EQ(chmod(path_.c_str(), mode), 0);
  }
  std::string dir_, path_;
};

TEST_F(EnvFileOnDiskTest, PrivateFileLoads) {
  Write("AWS_REGION=eu-west-1\n", 0600);
  auto f = LoadEnvFile(path_, getuid());
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->settings.size(), 1u);
  EXPECT_EQ(f->settings[0].value, "eu-west-1");
}

TEST_F(EnvFileOnDiskTest, GroupOrOtherAccessIsRefused) {
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644}) {
    Write("AWS_SECRET_ACCESS_KEY=topsecret\n", mode);
    auto f = LoadEnvFile(path_, getuid());
    ASSERT_FALSE(f.ok()) << std::oct << mode;
    EXPECT_THAT(f.error().message, HasSubstr("accessible by group or others"));
    EXPECT_THAT(f.error().message, HasSubstr("chmod 600 " + path_));
    EXPECT_THAT(f.error().message, Not(HasSubstr("topsecret")));
  }
}

TEST_F(EnvFileOnDiskTest, MissingFileAndDirectoryAreRefused) {
  auto missing = LoadEnvFile(dir_ + "/nope.env", getuid());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("nope.env: No such file or directory"));
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  auto directory = LoadEnvFile(dir_, getuid());
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message, HasSubstr("is not a regular file"));
}

TEST_F(EnvFileOnDiskTest, AnotherUsersFileIsRefused) {
  Write("AWS_REGION=x\n", 0600);
  if (getuid() != 0) GTEST_SKIP() << "needs root to chown";
  ASSERT_EQ(chown(path_.c_str(), 12345, 12345), 0);
  EXPECT_TRUE(LoadEnvFile(path_, 12345).ok());
  for (uid_t caller : {0u, 4242u}) {  // even root: a file of another user may be planted
    auto other = LoadEnvFile(path_, caller);
    ASSERT_FALSE(other.ok());
    EXPECT_THAT(other.error().message, HasSubstr("belongs to uid 12345"));
  }
}

TEST_F(EnvFileOnDiskTest, MalformedFileNamesPathAndLine) {
  Write("AWS_REGION=x\nbroken\n", 0600);
  auto f = LoadEnvFile(path_, getuid());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, path_ + ":2: expected KEY=VALUE");
}

}  // namespace
}  // namespace bucketfs::tools
