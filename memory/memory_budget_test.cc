#include "memory/memory_budget.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace bucketfs::memory {
namespace {

TEST(MemoryBudgetTest, TryReserveRefusesPastTheLimit) {
  MemoryBudget b(100);
  EXPECT_TRUE(b.TryReserve(60));
  EXPECT_TRUE(b.TryReserve(40));
  EXPECT_FALSE(b.TryReserve(1));
  EXPECT_EQ(b.used(), 100u);
  EXPECT_EQ(b.refusals(), 1u);
  b.Release(50);
  EXPECT_TRUE(b.TryReserve(50));  // released bytes are usable again at once
  EXPECT_EQ(b.peak(), 100u);
}

TEST(MemoryBudgetTest, ForceReserveGoesPastTheLimitAndIsCounted) {
  MemoryBudget b(100);
  ASSERT_TRUE(b.TryReserve(90));
  b.ForceReserve(30);
  EXPECT_EQ(b.used(), 120u);
  EXPECT_EQ(b.forced_bytes(), 20u);
  EXPECT_EQ(b.peak(), 120u);
  EXPECT_FALSE(b.TryReserve(1));
  b.Release(120);
  EXPECT_EQ(b.used(), 0u);
  b.ResetPeak();
  EXPECT_EQ(b.peak(), 0u);
}

TEST(MemoryBudgetTest, DefaultIsAFractionOfRamWithinBounds) {
  const uint64_t d = MemoryBudget::DefaultBudgetBytes();
  EXPECT_GE(d, 256ull << 20);
  EXPECT_LE(d, 4ull << 30);
}

TEST(MemoryBudgetTest, DefaultForAGivenMemorySize) {
  EXPECT_EQ(MemoryBudget::DefaultBudgetBytes(8ull << 30), 2ull << 30);
  EXPECT_EQ(MemoryBudget::DefaultBudgetBytes(512ull << 20), 256ull << 20);  // the floor
  EXPECT_EQ(MemoryBudget::DefaultBudgetBytes(64ull << 30), 4ull << 30);     // the ceiling
}

TEST(MemoryBudgetTest, ConcurrentReserveNeverExceedsLimit) {
  MemoryBudget b(1000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&b] {
      for (int i = 0; i < 20000; ++i) {
        if (b.TryReserve(7)) b.Release(7);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(b.used(), 0u);
  EXPECT_LE(b.peak(), 1000u);
}

}  // namespace
}  // namespace bucketfs::memory
