#include "prefetch/buffer_pool.h"

#include <gtest/gtest.h>

namespace bucketfs::prefetch {
namespace {

TEST(BufferPoolTest, ReusesBuffersOfThePartSizeUpToTheCap) {
  BufferPool pool(1024, 2);
  auto a = pool.Get(1024);
  auto b = pool.Get(1024);
  auto c = pool.Get(1024);
  std::byte* const a_ptr = a.get();
  pool.Put(std::move(a), 1024);
  pool.Put(std::move(b), 1024);
  pool.Put(std::move(c), 1024);  // over the cap: freed
  EXPECT_EQ(pool.pooled(), 2u);
  auto d = pool.Get(1024);
  auto e = pool.Get(1024);
  EXPECT_TRUE(d.get() == a_ptr || e.get() == a_ptr);
  EXPECT_EQ(pool.reuses(), 2u);
  EXPECT_EQ(pool.pooled(), 0u);
}

TEST(BufferPoolTest, OtherSizesAreNeverPooled) {
  BufferPool pool(1024, 4);
  auto a = pool.Get(100);
  ASSERT_NE(a, nullptr);
  pool.Put(std::move(a), 100);
  EXPECT_EQ(pool.pooled(), 0u);
  auto b = pool.Get(1024);
  pool.Put(std::move(b), 1024);
  auto c = pool.Get(2048);  // a different size never takes a pooled buffer
  EXPECT_EQ(pool.reuses(), 0u);
  EXPECT_EQ(pool.pooled(), 1u);
}

}  // namespace
}  // namespace bucketfs::prefetch
