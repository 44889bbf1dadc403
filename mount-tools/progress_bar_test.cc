#include "mount-tools/progress_bar.h"

#include <gtest/gtest.h>

namespace bucketfs::tools {
namespace {

TEST(ProgressBar, RenderShowsPercentRateAndEta) {
  std::string line = ProgressBar::Render("get s3://b/k", 512ull << 20, 1024ull << 20, 2.0, 120);
  EXPECT_NE(line.find(" 50% ["), std::string::npos) << line;
  EXPECT_NE(line.find("512.0 MiB / 1.0 GiB"), std::string::npos) << line;
  EXPECT_NE(line.find("268.4 MB/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 2s"), std::string::npos) << line;
  EXPECT_LT(line.size(), 120u);
}

TEST(ProgressBar, UnknownTotalHasNoBar) {
  std::string line = ProgressBar::Render("put", 1024, 0, 1.0, 80);
  EXPECT_EQ(line.find('['), std::string::npos) << line;
  EXPECT_NE(line.find("1.0 KiB"), std::string::npos) << line;
}

TEST(ProgressBar, EntriesAreCountedNotSized) {
  std::string line = ProgressBar::Render("warm /mnt", 12345, 0, 2.0, 100, ProgressUnit::kEntries);
  EXPECT_NE(line.find("12345 entries"), std::string::npos) << line;
  EXPECT_NE(line.find("6172/s"), std::string::npos) << line;
  EXPECT_EQ(line.find("MB/s"), std::string::npos) << line;
}

TEST(ProgressBar, NarrowTerminalIsTruncated) {
  std::string line = ProgressBar::Render("get s3://bucket/a-long-key", 1, 100, 1.0, 20);
  EXPECT_LE(line.size(), 19u);
}

TEST(ProgressBar, CountsWhenDisabled) {
  ProgressBar bar("x", 10, /*enabled=*/false);
  bar.Add(3);
  bar.Add(4);
  EXPECT_EQ(bar.done(), 7u);
  bar.Finish();
}

}  // namespace
}  // namespace bucketfs::tools
