#include "memory/spare_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "memory/buffer_pool.h"
#include "memory/memory_poison.h"
#include "memory/part_buffer_budget.h"

namespace bucketfs::memory {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

TEST(SpareMemoryTest, NothingSpareGivesNothing) {
  SpareMemory spare(64 * kMiB);
  EXPECT_EQ(spare.Take(8 * kMiB), nullptr);
  spare.Give(AllocateBuffer(4096));  // not mapped: never kept
  EXPECT_EQ(spare.bytes(), 0u);
  spare.Give(AllocateBuffer(4 * kMiB));
  EXPECT_EQ(spare.Take(4096), nullptr);      // below the mapped size
  EXPECT_EQ(spare.Take(8 * kMiB), nullptr);  // more than is spare
  EXPECT_EQ(spare.bytes(), 4 * kMiB);
}

TEST(SpareMemoryTest, AMappingOfTheLengthIsHandedOutWhole) {
  SpareMemory spare(64 * kMiB);
  Buffer a = AllocateBuffer(8 * kMiB);
  std::byte* const at = a.get();
  spare.Give(std::move(a));
  Buffer b = spare.Take(8 * kMiB - 4096);  // rounds up to the same length
  EXPECT_EQ(b.get(), at);
  EXPECT_EQ(b.get_deleter().mapped, 8 * kMiB);
  EXPECT_EQ(spare.bytes(), 0u);
  EXPECT_EQ(spare.joins(), 0u);
}

TEST(SpareMemoryTest, ALongerMappingGivesItsFrontAndKeepsTheRest) {
  SpareMemory spare(64 * kMiB);
  Buffer big = AllocateBuffer(16 * kMiB);
  std::byte* const at = big.get();
  spare.Give(std::move(big));
  Buffer front = spare.Take(8 * kMiB);
  Buffer back = spare.Take(8 * kMiB);
  ASSERT_NE(front, nullptr);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(front.get(), at);
  EXPECT_EQ(back.get(), at + 8 * kMiB);
  std::memset(front.get(), 1, 8 * kMiB);  // each is memory of its own
  std::memset(back.get(), 2, 8 * kMiB);
  EXPECT_EQ(front[8 * kMiB - 1], std::byte{1});
  back.reset();  // each half unmaps only itself
  EXPECT_EQ(front[0], std::byte{1});
  EXPECT_EQ(spare.bytes(), 0u);
}

TEST(SpareMemoryTest, ShorterMappingsAreMovedTogetherWithTheirPages) {
  SpareMemory spare(64 * kMiB);
  Buffer a = AllocateBuffer(4 * kMiB);
  Buffer b = AllocateBuffer(4 * kMiB);
  std::memset(a.get(), 0xa, 4 * kMiB);
  std::memset(b.get(), 0xb, 4 * kMiB);
  spare.Give(std::move(a));
  spare.Give(std::move(b));
  Buffer joined = spare.Take(8 * kMiB);
  ASSERT_NE(joined, nullptr);
  EXPECT_EQ(spare.joins(), 1u);
  EXPECT_EQ(spare.bytes(), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(joined.get()) % kHugeBufferBytes, 0u);
  // The pages moved, not copied or zeroed: the last mapping given comes first.
  EXPECT_EQ(joined[0], std::byte{0xb});
  EXPECT_EQ(joined[8 * kMiB - 1], std::byte{0xa});
  std::memset(joined.get(), 3, 8 * kMiB);  // all of it writable
  EXPECT_EQ(joined[4 * kMiB], std::byte{3});
}

TEST(SpareMemoryTest, AJoinMayTakeTheFrontOfTheLastMapping) {
  SpareMemory spare(64 * kMiB);
  spare.Give(AllocateBuffer(4 * kMiB));
  spare.Give(AllocateBuffer(6 * kMiB));
  Buffer joined = spare.Take(8 * kMiB);
  ASSERT_NE(joined, nullptr);
  EXPECT_EQ(spare.bytes(), 2 * kMiB);
  std::memset(joined.get(), 4, 8 * kMiB);
  Buffer rest = spare.Take(2 * kMiB);
  ASSERT_NE(rest, nullptr);
  std::memset(rest.get(), 5, 2 * kMiB);
  EXPECT_EQ(joined[8 * kMiB - 1], std::byte{4});
}

TEST(SpareMemoryTest, KeepsNoMoreThanItsLimit) {
  SpareMemory spare(8 * kMiB);
  spare.Give(AllocateBuffer(8 * kMiB));
  spare.Give(AllocateBuffer(4 * kMiB));  // over the limit: freed
  EXPECT_EQ(spare.bytes(), 8 * kMiB);
}

TEST(SpareMemoryTest, SpareMappingsArePoisonedUnderAsan) {
  if (!kAsanBuild) GTEST_SKIP() << "needs AddressSanitizer";
  SpareMemory spare(64 * kMiB);
  Buffer a = AllocateBuffer(4 * kMiB);
  std::byte* const at = a.get();
  spare.Give(std::move(a));
  EXPECT_TRUE(IsPoisoned(at));
  Buffer b = spare.Take(3 * kMiB);
  EXPECT_FALSE(IsPoisoned(b.get() + 3 * kMiB - 1));
  EXPECT_TRUE(IsPoisoned(b.get() + 3 * kMiB));  // the slack is not the buffer's
}

TEST(SpareMemoryTest, TheReadPoolAndTheWriteBudgetShareIt) {
  auto spare = std::make_shared<SpareMemory>(64 * kMiB);
  PartBufferBudget writes(32 * kMiB, spare);
  BufferPool reads(4 * kMiB, 0, spare);  // keeps none of its own
  // A part written and sent: its buffer becomes spare, not the budget's own.
  PartBuffer part = writes.Take(8 * kMiB);
  std::byte* const written = part.data.get();
  writes.Give(std::move(part));
  EXPECT_EQ(writes.used(), 0u);
  EXPECT_EQ(spare->bytes(), 8 * kMiB);
  EXPECT_TRUE(reads.HasSpare());
  // Two reads' parts are made of it, with no new memory.
  Buffer r1 = reads.Get(4 * kMiB);
  Buffer r2 = reads.Get(4 * kMiB);
  EXPECT_EQ(r1.get(), written);
  EXPECT_EQ(r2.get(), written + 4 * kMiB);
  EXPECT_FALSE(reads.HasSpare());
  // Given back, they make the next written part.
  reads.Put(std::move(r1), 4 * kMiB);
  reads.Put(std::move(r2), 4 * kMiB);
  PartBuffer again = writes.Take(8 * kMiB);
  EXPECT_EQ(spare->joins(), 1u);
  EXPECT_EQ(spare->bytes(), 0u);
  std::memset(again.data.get(), 6, 8 * kMiB);
  writes.Give(std::move(again));
}

}  // namespace
}  // namespace bucketfs::memory
