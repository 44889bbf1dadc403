// StagingFile::Create: an anonymous file, or a named one unlinked at once where
// O_TMPFILE is missing; a named file that cannot be unlinked is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/staging_file.h"

namespace bucketfs::cache {
namespace {

namespace fs = std::filesystem;

// No O_TMPFILE here; Unlink fails with `unlink_errno` (0: works).
class NoTmpFileOps : public StagingFileOps {
 public:
  explicit NoTmpFileOps(int unlink_errno) : unlink_errno_(unlink_errno) {}
  int OpenTmpFile(const char*) override {
    errno = EOPNOTSUPP;
    return -1;
  }
  int Unlink(const char* path) override {
    unlinked.push_back(path);
    if (unlink_errno_ == 0) return ::unlink(path);
    errno = unlink_errno_;
    return -1;
  }
  std::vector<std::string> unlinked;

 private:
  const int unlink_errno_;
};

class StagingFileCreateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bucketfs-staging-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(EnsureStagingDir(dir_.string()).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t Entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  fs::path dir_;
};

TEST_F(StagingFileCreateTest, AnonymousFileLeavesNothingInTheDirectory) {
  auto f = StagingFile::Create(dir_.string(), nullptr, nullptr);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(Entries(), 0u);
  const std::vector<std::byte> data(10, std::byte{7});
  ASSERT_TRUE((*f)->Write(5, data).ok());
  std::vector<std::byte> back(15);
  ASSERT_TRUE((*f)->Read(0, back).ok());
  EXPECT_EQ(back[0], std::byte{0});
  EXPECT_EQ(back[14], std::byte{7});
}

TEST_F(StagingFileCreateTest, NamedFallbackIsUnlinkedAtOnce) {
  auto ops = std::make_shared<NoTmpFileOps>(0);
  auto f = StagingFile::Create(dir_.string(), ops, nullptr);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(ops->unlinked.size(), 1u);
  EXPECT_EQ(Entries(), 0u);
  const std::vector<std::byte> data(3, std::byte{9});
  ASSERT_TRUE((*f)->Write(0, data).ok());
  EXPECT_EQ((*f)->size(), 3u);
}

TEST_F(StagingFileCreateTest, NamedFallbackThatCannotBeUnlinkedIsRefused) {
  auto ops = std::make_shared<NoTmpFileOps>(EACCES);
  auto f = StagingFile::Create(dir_.string(), ops, nullptr);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().errno_value, EACCES);
  EXPECT_NE(f.error().message.find("unlink"), std::string::npos) << f.error().ToString();
  ASSERT_EQ(ops->unlinked.size(), 1u);
  // The file it could not remove is still there (TearDown removes it).
  EXPECT_EQ(Entries(), 1u);
}

}  // namespace
}  // namespace bucketfs::cache
