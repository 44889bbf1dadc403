// FilledParts on its own (upload/filled_parts.h): sums of in-order writes,
// holes, bounds, buffers given back, spills. Through a StagedUpload:
// staged_upload_filled_test.cc.
#include "upload/filled_parts.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "cache/staging_file.h"
#include "memory/part_buffer_budget.h"
#include "s3/crc32c.h"
#include "upload/part_layout.h"
#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;

// FilledParts on its own: parts of 1000 bytes from a budget of 8000 (fill
// buffers up to 4000 in all, each at most 2000).
class FilledPartsUnitTest : public ::testing::Test {
 protected:
  static std::string Body(const memory::PartBuffer& b) {
    return {reinterpret_cast<const char*>(b.data.get()), static_cast<size_t>(b.size)};
  }
  static uint32_t Sum(const std::string& s) { return s3::Crc32c(Bytes(s)); }

  std::shared_ptr<memory::PartBufferBudget> budget_ =
      std::make_shared<memory::PartBufferBudget>(8000);
};

TEST_F(FilledPartsUnitTest, InOrderWritesCarryTheirSum) {
  FilledParts fills(budget_, /*crc32c=*/true);
  ASSERT_TRUE(fills.Start(1, 1000));
  EXPECT_TRUE(fills.Has(1));
  const std::string a = Pattern(300, 60), b = Pattern(500, 61);
  fills.Write(1, 0, Bytes(a));
  fills.Write(1, 300, Bytes(b));
  FilledParts::Sent sent = fills.Take(1, 800);
  EXPECT_FALSE(fills.Has(1));
  EXPECT_EQ(Body(sent.body), a + b);
  ASSERT_TRUE(sent.crc32c.has_value());
  EXPECT_EQ(*sent.crc32c, Sum(a + b));
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, HolesAreZerosAndInTheSum) {
  // A write past what the part holds, and a short part's end: zeros, as the
  // staging file would read, summed with the rest.
  FilledParts fills(budget_, /*crc32c=*/true);
  ASSERT_TRUE(fills.Start(2, 1000));
  const std::string a = Pattern(100, 62);
  fills.Write(2, 200, Bytes(a));
  FilledParts::Sent sent = fills.Take(2, 700);
  const std::string expect = std::string(200, '\0') + a + std::string(400, '\0');
  EXPECT_EQ(Body(sent.body), expect);
  ASSERT_TRUE(sent.crc32c.has_value());
  EXPECT_EQ(*sent.crc32c, Sum(expect));
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, AWriteBackIntoSummedBytesDropsTheSum) {
  FilledParts fills(budget_, /*crc32c=*/true);
  ASSERT_TRUE(fills.Start(1, 1000));
  std::string expect = Pattern(400, 63);
  fills.Write(1, 0, Bytes(expect));
  fills.Write(1, 10, Bytes("back"));
  expect.replace(10, 4, "back");
  FilledParts::Sent sent = fills.Take(1, 400);
  EXPECT_EQ(Body(sent.body), expect);
  EXPECT_FALSE(sent.crc32c.has_value());  // the sender sums the part itself
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, PartsWithoutCrc32cCarryNoSum) {
  FilledParts fills(budget_, /*crc32c=*/false);
  ASSERT_TRUE(fills.Start(1, 1000));
  fills.Write(1, 0, Bytes("abc"));
  FilledParts::Sent sent = fills.Take(1, 3);
  EXPECT_EQ(Body(sent.body), "abc");
  EXPECT_FALSE(sent.crc32c.has_value());
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, FillsAreBoundedPerWriterAndByTheBudget) {
  FilledParts a(budget_, true), b(budget_, true);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(a.Start(i, 1000)) << i;
  EXPECT_TRUE(a.Full());
  ASSERT_TRUE(b.Start(1, 1000));   // 4000: half the budget
  EXPECT_FALSE(b.Start(2, 1000));  // would pass half
  EXPECT_FALSE(b.Has(2));
  // Sent parts no longer count as fills.
  FilledParts::Sent sent = a.Take(3, 1000);
  EXPECT_FALSE(a.Full());
  EXPECT_TRUE(b.Start(2, 1000));
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, ReleaseAndDestructionGiveEveryBufferBack) {
  {
    FilledParts fills(budget_, true);
    ASSERT_TRUE(fills.Start(1, 2000));
    ASSERT_TRUE(fills.Start(2, 2000));
    EXPECT_FALSE(FilledParts(budget_, true).Start(3, 1));  // half the budget is taken
    fills.Release();
    EXPECT_FALSE(fills.Has(1));
    ASSERT_TRUE(fills.Start(1, 2000));
    ASSERT_TRUE(fills.Start(2, 2000));
  }
  // Had the destructor kept them, half the budget would still be fills.
  FilledParts fills(budget_, true);
  EXPECT_TRUE(fills.Start(1, 2000));
  EXPECT_TRUE(fills.Start(2, 2000));
}

TEST_F(FilledPartsUnitTest, SpillWritesEachPartAtItsPlace) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("filled_parts_test-" + std::to_string(::getpid()));
  ASSERT_TRUE(cache::EnsureStagingDir(dir.string()).ok());
  auto staging = cache::StagingFile::Create(dir.string(), nullptr, nullptr);
  ASSERT_TRUE(staging.ok()) << staging.error().ToString();
  const PartLayout layout(1000);
  FilledParts fills(budget_, true);
  ASSERT_TRUE(fills.Start(1, 1000));
  ASSERT_TRUE(fills.Start(3, 1000));
  const std::string a = Pattern(1000, 64), b = Pattern(50, 65);
  fills.Write(1, 0, Bytes(a));
  fills.Write(3, 20, Bytes(b));
  ASSERT_TRUE(fills.Spill(**staging, layout).ok());
  EXPECT_FALSE(fills.Has(1));
  EXPECT_FALSE(fills.Has(3));
  std::string got(3070, '?');
  ASSERT_TRUE((*staging)->Read(0, std::as_writable_bytes(std::span(got.data(), got.size()))).ok());
  EXPECT_EQ(got, std::string(1000, '\0') + a + std::string(1000, '\0') + std::string(20, '\0') + b);
  staging->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bucketfs::upload
