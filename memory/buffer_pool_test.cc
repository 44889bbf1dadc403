#include "memory/buffer_pool.h"

#include <gtest/gtest.h>

#include "memory/memory_poison.h"

namespace bucketfs::memory {
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

TEST(BufferPoolTest, LargeSmallerPartsShareThePooledBuffers) {
  const uint64_t size = 4 * kHugeBufferBytes;
  const uint64_t half = size / 2;
  BufferPool pool(size, 2);
  auto a = pool.Get(half);  // a stream's first parts are smaller
  std::byte* const a_ptr = a.get();
  a[half - 1] = std::byte{1};
  pool.Put(std::move(a), half);
  EXPECT_EQ(pool.pooled(), 1u);
  auto b = pool.Get(size);  // a full part reuses it, all of it writable
  EXPECT_EQ(b.get(), a_ptr);
  b[size - 1] = std::byte{2};
  pool.Put(std::move(b), size);
  auto small = pool.Get(half - 4096);  // below half: a buffer of its own
  EXPECT_NE(small.get(), a_ptr);
  pool.Put(std::move(small), half - 4096);
  EXPECT_EQ(pool.pooled(), 1u);
  EXPECT_EQ(pool.reuses(), 1u);
}

TEST(BufferPoolTest, HeldBytesIsWhatTheBufferHolds) {
  // What a budget counts for a buffer from Get: a pooled buffer's whole size
  // for a smaller part that shares it, whole huge pages for a mapped one.
  const uint64_t size = 4 * kHugeBufferBytes;
  BufferPool pool(size, 2);
  EXPECT_EQ(pool.HeldBytes(size), size);
  EXPECT_EQ(pool.HeldBytes(size / 2), size);
  EXPECT_EQ(pool.HeldBytes(size - 1), size);
  EXPECT_EQ(pool.HeldBytes(size / 2 - 4096), size / 2);  // its own, rounded up
  EXPECT_EQ(pool.HeldBytes(1000), 1000u);
  EXPECT_EQ(pool.HeldBytes(size + 1), size + kHugeBufferBytes);
  EXPECT_EQ(AllocatedBytes(kHugeBufferBytes - 1), kHugeBufferBytes - 1);
  EXPECT_EQ(AllocatedBytes(kHugeBufferBytes + 1), 2 * kHugeBufferBytes);
  EXPECT_EQ(pool.Get(size / 2).get_deleter().mapped, pool.HeldBytes(size / 2));
}

TEST(BufferPoolTest, PooledBuffersAndMappingSlackArePoisonedUnderAsan) {
  // A part still read after its buffer went back to the pool must be
  // reported; so must an access past a mapped buffer's size (the mapping is
  // rounded up to 2 MiB, so ASan has no redzone there of its own).
  if (!kAsanBuild) GTEST_SKIP() << "needs AddressSanitizer";
  BufferPool pool(1024, 2);
  auto a = pool.Get(1024);
  std::byte* const p = a.get();
  EXPECT_FALSE(IsPoisoned(p));
  pool.Put(std::move(a), 1024);
  EXPECT_TRUE(IsPoisoned(p));
  EXPECT_TRUE(IsPoisoned(p + 1023));
  auto b = pool.Get(1024);
  ASSERT_EQ(b.get(), p);
  EXPECT_FALSE(IsPoisoned(p));
  EXPECT_FALSE(IsPoisoned(p + 1023));

  const uint64_t size = kHugeBufferBytes + 4096 + 3;
  BufferPool big(size, 1);
  auto m = big.Get(size);
  std::byte* const q = m.get();
  EXPECT_FALSE(IsPoisoned(q));
  EXPECT_FALSE(IsPoisoned(q + size - 1));
  EXPECT_TRUE(IsPoisoned(q + size));
  big.Put(std::move(m), size);
  EXPECT_TRUE(IsPoisoned(q));
  auto again = big.Get(size);
  ASSERT_EQ(again.get(), q);
  EXPECT_FALSE(IsPoisoned(q + size - 1));
  EXPECT_TRUE(IsPoisoned(q + size));
  big.Put(std::move(again), size);
  // A smaller part in a pooled buffer: the tail past it is not its own.
  const uint64_t quad = 4 * kHugeBufferBytes;
  BufferPool shared(quad, 1);
  auto first = shared.Get(quad);
  std::byte* const r = first.get();
  shared.Put(std::move(first), quad);
  const uint64_t part_size = 3 * kHugeBufferBytes;
  auto part = shared.Get(part_size);
  ASSERT_EQ(part.get(), r);
  EXPECT_FALSE(IsPoisoned(r + part_size - 1));
  EXPECT_TRUE(IsPoisoned(r + part_size));
  auto fresh = shared.Get(part_size);  // pool empty: a new mapping, tail poisoned
  EXPECT_FALSE(IsPoisoned(fresh.get() + part_size - 1));
  EXPECT_TRUE(IsPoisoned(fresh.get() + part_size));
}

}  // namespace
}  // namespace bucketfs::memory
