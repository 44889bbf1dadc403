#include "mount-tools/data_warmer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace bucketfs::tools {
namespace {

TEST(DataWarmer, ReadsEveryFileToItsEnd) {
  char tmpl[] = "/tmp/data-warmer-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  std::filesystem::create_directories(root + "/a/b");
  uint64_t total = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string path = root + (i % 2 ? "/a/b/f" : "/a/f") + std::to_string(i);
    std::ofstream(path) << std::string(static_cast<size_t>(i) * 100000, 'x');
    total += static_cast<uint64_t>(i) * 100000;
  }
  auto files = DataWarmer::ListFiles(root);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 20u);
  EXPECT_TRUE(std::is_sorted(files->begin(), files->end()));
  DataWarmer warmer(4);
  auto counts = warmer.Run(*files);
  EXPECT_EQ(counts.files, 20u);
  EXPECT_EQ(counts.bytes, total);
  EXPECT_EQ(warmer.bytes(), total);
  EXPECT_EQ(counts.errors, 0u);
  // A file that vanished is counted as an error, the others still read.
  std::filesystem::remove((*files)[0]);
  counts = warmer.Run(*files);
  EXPECT_EQ(counts.files, 19u);
  EXPECT_EQ(counts.errors, 1u);
  EXPECT_NE(counts.first_error.find("No such file"), std::string::npos);
  std::filesystem::remove_all(root);
  EXPECT_FALSE(DataWarmer::ListFiles(root).ok());
}

}  // namespace
}  // namespace bucketfs::tools
