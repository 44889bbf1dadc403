#include "tests/s3sim/body_pool.h"

#include <gtest/gtest.h>

#include <string>

namespace s3sim {
namespace {

constexpr size_t kMiB = 1 << 20;

TEST(BodyPoolTest, AFreedLargeBufferServesTheNextUploadOfItsSize) {
  BodyPool pool(64 * kMiB);
  std::string first = pool.Take(8 * kMiB);
  ASSERT_EQ(first.size(), 8 * kMiB);
  first.assign(8 * kMiB, 'x');
  const char* memory = first.data();
  {
    BufferPtr shared = pool.Share(std::move(first));
    EXPECT_EQ(shared->data(), memory);  // shared without a copy
    EXPECT_EQ(pool.pooled_bytes(), 0u);
  }
  EXPECT_GE(pool.pooled_bytes(), 8 * kMiB);
  std::string second = pool.Take(6 * kMiB);
  EXPECT_EQ(second.data(), memory);
  EXPECT_EQ(second.size(), 6 * kMiB);
  EXPECT_EQ(pool.reuses(), 1u);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
}

TEST(BodyPoolTest, KeepsLargeBuffersAloneAndOnlyWithinItsCapacity) {
  BodyPool pool(10 * kMiB);
  pool.Give(std::string(1000, 'a'));  // small: malloc's business
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  pool.Give(pool.Take(8 * kMiB));
  const uint64_t kept = pool.pooled_bytes();
  EXPECT_GE(kept, 8 * kMiB);
  pool.Give(pool.Take(8 * kMiB + 1));  // a second one does not fit: freed
  EXPECT_EQ(pool.pooled_bytes(), kept);
  pool.SetCapacity(0);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
}

TEST(BodyPoolTest, AMuchLargerBufferIsNotSpentOnASmallUpload) {
  BodyPool pool(1ULL << 30);
  pool.Give(pool.Take(64 * kMiB));
  std::string small = pool.Take(2 * kMiB);
  EXPECT_EQ(small.size(), 2 * kMiB);
  EXPECT_EQ(pool.reuses(), 0u);
  EXPECT_GE(pool.pooled_bytes(), 64 * kMiB);
  std::string big = pool.Take(40 * kMiB);
  EXPECT_EQ(pool.reuses(), 1u);
  EXPECT_EQ(big.size(), 40 * kMiB);
}

}  // namespace
}  // namespace s3sim
