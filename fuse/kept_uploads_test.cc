// KeptUploads: the copy holds the bytes, a failed copy leaves nothing, the
// note names what the bytes were for.
#include "fuse/kept_uploads.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace bucketfs::fs {
namespace {

class KeptUploadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = ::testing::TempDir() + "kept-XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    root_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static KeptUploads::ReadFn Serve(const std::string& bytes) {
    return [bytes](uint64_t offset, std::span<std::byte> dest) -> Result<size_t> {
      if (offset >= bytes.size()) return size_t{0};
      const size_t n = std::min(dest.size(), bytes.size() - static_cast<size_t>(offset));
      std::memcpy(dest.data(), bytes.data() + offset, n);
      return n;
    };
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string root_;
};

TEST_F(KeptUploadsTest, CopiesEveryByteAcrossChunks) {
  KeptUploads kept(root_ + "/a/failed");
  std::string bytes(2500000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  auto copy = kept.Keep("b", "dir/k", bytes.size(), Serve(bytes));
  ASSERT_TRUE(copy.ok()) << copy.error().ToString();
  EXPECT_EQ(Slurp(copy->data_path), bytes);
  EXPECT_EQ(Slurp(copy->info_path), "s3://b/dir/k\nsize 2500000\n");
  kept.Failed(*copy, MakeError(EACCES, "AccessDenied", "no"));
  EXPECT_TRUE(Slurp(copy->info_path).ends_with("error AccessDenied: no\n"))
      << Slurp(copy->info_path);
  EXPECT_EQ(kept.kept(), 1u);
}

TEST_F(KeptUploadsTest, DropRemovesBothFiles) {
  KeptUploads kept(root_);
  auto copy = kept.Keep("b", "k", 3, Serve("abc"));
  ASSERT_TRUE(copy.ok());
  kept.Drop(*copy);
  EXPECT_FALSE(std::filesystem::exists(copy->data_path));
  EXPECT_FALSE(std::filesystem::exists(copy->info_path));
  EXPECT_EQ(kept.kept(), 0u);
}

TEST_F(KeptUploadsTest, AReadErrorOrAShortFileLeavesNothing) {
  KeptUploads kept(root_);
  auto failing = [](uint64_t, std::span<std::byte>) -> Result<size_t> {
    return MakeError(EIO, "Transport", "gone");
  };
  auto copy = kept.Keep("b", "k", 10, failing);
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().errno_value, EIO);
  auto short_copy = kept.Keep("b", "k", 10, Serve("abc"));
  ASSERT_FALSE(short_copy.ok());
  EXPECT_TRUE(std::filesystem::is_empty(root_));
}

TEST_F(KeptUploadsTest, ADirectoryThatCannotBeMadeIsAnError) {
  std::ofstream(root_ + "/file") << "x";
  KeptUploads kept(root_ + "/file/failed");
  auto copy = kept.Keep("b", "k", 1, Serve("x"));
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().errno_value, ENOTDIR);
}

}  // namespace
}  // namespace bucketfs::fs
