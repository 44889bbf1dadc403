// PartBufferBudget: buffers reused within the capacity, huge-page mappings for
// large parts, poisoning of kept buffers under ASan, and fill buffers kept
// within half the capacity.
#include "memory/part_buffer_budget.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "memory/memory_poison.h"

namespace bucketfs::memory {
namespace {

TEST(PartBufferBudgetTest, BuffersAreReusedWithinTheCapacity) {
  PartBufferBudget budget(3000);
  PartBuffer a = budget.Take(1000);
  const std::byte* first = a.data.get();
  budget.Give(std::move(a));
  PartBuffer b = budget.Take(800);  // a kept buffer that fits is reused
  EXPECT_EQ(b.data.get(), first);
  EXPECT_EQ(b.size, 800u);
  PartBuffer c = budget.Take(2000);
  budget.Give(std::move(b));
  budget.Give(std::move(c));         // 1000 + 2000 kept: exactly the capacity
  PartBuffer d = budget.Take(3000);  // nothing fits: the kept ones are freed
  EXPECT_EQ(d.size, 3000u);
  budget.Give(std::move(d));
  PartBuffer e = budget.Take(3000);  // ... and d was kept in their place
  EXPECT_EQ(e.capacity, 3000u);
  budget.Give(std::move(e));
  EXPECT_LE(budget.peak(), 3000u);
}

TEST(PartBufferBudgetTest, AReusedBufferIsChargedForAllItHolds) {
  // A small part (a file's tail, a small file's PutObject) given a kept
  // buffer larger than it is charged the whole buffer: counting only its
  // bytes let the buffers held pass the capacity (up to twice it).
  PartBufferBudget budget(4000);
  PartBuffer a = budget.Take(2000);
  const std::byte* kept = a.data.get();
  budget.Give(std::move(a));
  PartBuffer small = budget.Take(100);
  EXPECT_EQ(small.data.get(), kept);  // reused
  EXPECT_EQ(small.size, 100u);
  EXPECT_EQ(budget.used(), 2000u);
  PartBuffer other = budget.Take(2000);
  EXPECT_EQ(budget.used(), 4000u);  // 4000 held: a third Take would wait
  budget.Give(std::move(small));
  budget.Give(std::move(other));
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_LE(budget.peak(), 4000u);
}

TEST(PartBufferBudgetTest, AReusedFillBufferCountsWholeAsAFill) {
  PartBufferBudget budget(4000);  // fills up to 2000
  PartBuffer a = budget.Take(1000);
  budget.Give(std::move(a));
  auto f = budget.TakeFill(900);  // the kept 1000 is reused: 1000 of fills
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->charged, 1000u);
  EXPECT_EQ(f->capacity, 1000u);
  auto g = budget.TakeFill(1000);
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(budget.TakeFill(1).has_value());  // 2000 of fills already
  budget.Give(std::move(*f));
  budget.Give(std::move(*g));
  EXPECT_EQ(budget.used(), 0u);
  // A kept buffer that would take the fills past half is not reused: a
  // buffer of the part's own size instead.
  PartBuffer big = budget.Take(1000);
  auto f1 = budget.TakeFill(1000);
  auto f2 = budget.TakeFill(500);
  ASSERT_TRUE(f1.has_value() && f2.has_value());
  budget.Give(std::move(big));  // kept
  auto f3 = budget.TakeFill(500);
  ASSERT_TRUE(f3.has_value());
  EXPECT_EQ(f3->capacity, 500u);
  EXPECT_EQ(f3->charged, 500u);
  budget.Give(std::move(*f1));
  budget.Give(std::move(*f2));
  budget.Give(std::move(*f3));
  EXPECT_EQ(budget.used(), 0u);
}

// The VmFlags line of the mapping that holds `p` in /proc/self/smaps.
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(' ') < line.find(':')) {
      inside = addr >= lo && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(PartBufferBudgetTest, LargePartBuffersAreOnHugePageBoundariesAndAdvised) {
  // A part buffer of 2 MiB or more is its own mapping, aligned to 2 MiB and
  // advised for transparent huge pages (fresh memory costs a fault per page:
  // a 512th of the faults with huge pages); small ones come from the heap.
  PartBufferBudget budget(64 << 20);
  PartBuffer big = budget.Take(16 << 20);
  ASSERT_NE(big.data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data.get()) % (2 << 20), 0u);
  EXPECT_EQ(big.data.get_deleter().mapped, 16u << 20);
  std::memset(big.data.get(), 0x5a, 16 << 20);  // all of it is writable
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {
    EXPECT_NE(VmFlagsOf(big.data.get()).find(" hg"), std::string::npos)
        << VmFlagsOf(big.data.get());
  }
  PartBuffer odd = budget.Take((3 << 20) + 5);  // rounded up to whole huge pages
  EXPECT_EQ(odd.data.get_deleter().mapped, 4u << 20);
  odd.data[(3 << 20) + 4] = std::byte{1};
  PartBuffer small = budget.Take(1000);
  EXPECT_EQ(small.data.get_deleter().mapped, 0u);
  budget.Give(std::move(big));
  budget.Give(std::move(odd));
  budget.Give(std::move(small));
  PartBuffer again = budget.Take(16 << 20);  // the kept mapping is reused
  EXPECT_EQ(again.data.get_deleter().mapped, 16u << 20);
  budget.Give(std::move(again));
}

TEST(PartBufferBudgetTest, KeptBuffersArePoisonedUnderAsan) {
  // A body still read after Give (an upload finishing late) must be reported,
  // not read another part's bytes from the reused buffer.
  if (!kAsanBuild) GTEST_SKIP() << "needs AddressSanitizer";
  PartBufferBudget budget(3000);
  PartBuffer a = budget.Take(1000);
  const std::byte* p = a.data.get();
  EXPECT_FALSE(IsPoisoned(p));
  EXPECT_FALSE(IsPoisoned(p + 999));
  budget.Give(std::move(a));
  EXPECT_TRUE(IsPoisoned(p));
  EXPECT_TRUE(IsPoisoned(p + 999));
  PartBuffer b = budget.Take(600);  // reused: its part usable, the rest not
  ASSERT_EQ(b.data.get(), p);
  EXPECT_FALSE(IsPoisoned(p));
  EXPECT_FALSE(IsPoisoned(p + 599));
  EXPECT_TRUE(IsPoisoned(p + 600));
  budget.Give(std::move(b));
}

TEST(PartBufferBudgetTest, FillBuffersStayWithinHalfTheCapacity) {
  PartBufferBudget budget(4000);
  auto a = budget.TakeFill(1000);
  ASSERT_TRUE(a.has_value());
  auto b = budget.TakeFill(1000);
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(budget.TakeFill(1000).has_value());  // would pass half
  EXPECT_FALSE(budget.TakeFill(1001).has_value());  // over a quarter
  // Take asks for at most half, so it never waits for the fills.
  PartBuffer c = budget.Take(3000);
  EXPECT_EQ(c.charged, 2000u);
  budget.FillSent(*a);  // sent: no longer a fill, so another may start
  // ... once there is room (it waits for buffers given back, like Take).
  std::thread give([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    budget.Give(std::move(c));
  });
  auto d = budget.TakeFill(1000);
  give.join();
  ASSERT_TRUE(d.has_value());
  budget.Give(std::move(*a));
  budget.Give(std::move(*b));
  budget.Give(std::move(*d));
  EXPECT_LE(budget.peak(), 4000u);
}

}  // namespace
}  // namespace bucketfs::memory
