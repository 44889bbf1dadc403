// CRC32C against published check values, both code paths agreeing, and the
// header encoding S3 expects.
#include "s3/crc32c.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string_view>
#include <vector>

namespace bucketfs::s3 {
namespace {

std::span<const std::byte> B(std::string_view s) { return std::as_bytes(std::span(s)); }

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Crc32c(B("")), 0u);
  EXPECT_EQ(Crc32c(B("123456789")), 0xE3069283u);  // the standard check value
  // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, and of 0xff.
  EXPECT_EQ(Crc32c(std::vector<std::byte>(32, std::byte{0})), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::vector<std::byte>(32, std::byte{0xff})), 0x62A8AB43u);
}

TEST(Crc32cTest, ContinuesAcrossPiecesAtAnyAlignment) {
  std::vector<std::byte> data(1000);
  std::mt19937 rng(7);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  const uint32_t whole = Crc32c(data);
  for (size_t cut : {0, 1, 3, 8, 13, 500, 999, 1000}) {
    std::span<const std::byte> s(data);
    EXPECT_EQ(Crc32c(s.subspan(cut), Crc32c(s.first(cut))), whole) << cut;
  }
}

// Bitwise reference, independent of both code paths.
uint32_t Reference(std::span<const std::byte> data) {
  uint32_t c = 0xFFFFFFFFu;
  for (std::byte b : data) {
    c ^= static_cast<uint32_t>(b);
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

// Long buffers take the three-lane path (blocks of 24 KiB): every length
// around the block edges, at odd alignments and continued from a prefix.
TEST(Crc32cTest, LongBuffersMatchTheBitwiseSum) {
  constexpr size_t kLongest = 3 * 24576 + 99, kLatest = 7;
  std::vector<std::byte> data(kLongest + kLatest);  // the longest piece at the latest start
  std::mt19937 rng(11);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  std::span<const std::byte> s(data);
  const size_t lengths[] = {24575, 24576, 24577, 49152, 49159, kLongest};
  const size_t starts[] = {0, 1, kLatest};
  for (size_t n : lengths) {
    for (size_t at : starts) {
      // subspan does not check its bounds: a piece past the end would read
      // beyond the buffer (ASan: heap-buffer-overflow) instead of failing.
      ASSERT_LE(at + n, s.size()) << n << " at " << at;
      auto piece = s.subspan(at, n);
      EXPECT_EQ(Crc32c(piece), Reference(piece)) << n << " at " << at;
    }
  }
  EXPECT_EQ(Crc32c(s.subspan(5000), Crc32c(s.first(5000))), Reference(s));
}

// CopyCrc32c: the copy is exact and the sum is Crc32c's, on both paths (one
// lane and three), at odd alignments of either buffer, continued from a
// prefix; bytes past the copy are left alone.
TEST(Crc32cTest, CopyCrc32cCopiesAndSums) {
  constexpr size_t kLongest = 3 * 24576 + 99;
  std::vector<std::byte> src(kLongest + 8);
  std::mt19937 rng(12);
  for (auto& b : src) b = static_cast<std::byte>(rng());
  const size_t lengths[] = {0, 1, 7, 8, 9, 24575, 24576, 24577, 49159, kLongest};
  for (size_t n : lengths) {
    for (size_t from : {size_t{0}, size_t{3}}) {
      for (size_t to : {size_t{0}, size_t{5}}) {
        std::vector<std::byte> dst(kLongest + 16, std::byte{0xEE});
        const auto piece = std::span<const std::byte>(src).subspan(from, n);
        const uint32_t sum = CopyCrc32c(std::span(dst).subspan(to, n), piece);
        EXPECT_EQ(sum, Reference(piece)) << n << " from " << from << " to " << to;
        EXPECT_TRUE(std::equal(piece.begin(), piece.end(), dst.begin() + to)) << n;
        EXPECT_EQ(dst[to + n], std::byte{0xEE}) << n;
        if (to > 0) {
          EXPECT_EQ(dst[to - 1], std::byte{0xEE}) << n;
        }
      }
    }
  }
  std::vector<std::byte> dst(kLongest);
  const std::span<const std::byte> all = std::span<const std::byte>(src).first(kLongest);
  const uint32_t head = Crc32c(all.first(1000));
  EXPECT_EQ(CopyCrc32c(dst, all.subspan(1000), head), Reference(all));
}

TEST(Crc32cTest, HeaderValueIsBase64OfBigEndian) {
  EXPECT_EQ(Crc32cBase64(B("")), "AAAAAA==");
  EXPECT_EQ(Crc32cBase64(B("123456789")), "4waSgw==");  // e3 06 92 83
}

}  // namespace
}  // namespace bucketfs::s3
