// CoverRange: whether parts by offset hold a range without a gap.
#include "prefetch/part.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "memory/memory_budget.h"

namespace bucketfs::prefetch {
namespace {

class CoverRangeTest : public ::testing::Test {
 protected:
  void Add(uint64_t offset, uint64_t size) {
    ASSERT_TRUE(budget_->TryReserve(Part::HeldBytes(size, nullptr)));
    parts_.emplace(offset, std::make_shared<Part>(offset, size, budget_));
  }
  std::vector<uint64_t> Offsets(uint64_t o, uint64_t e) {
    std::vector<PartPtr> covering;
    std::vector<uint64_t> offsets;
    if (!CoverRange(parts_, o, e, &covering)) {
      EXPECT_TRUE(covering.empty()) << "a range not covered returns no parts";
      return offsets;
    }
    for (const auto& p : covering) offsets.push_back(p->offset());
    return offsets;
  }

  std::shared_ptr<memory::MemoryBudget> budget_ = std::make_shared<memory::MemoryBudget>(1 << 20);
  PartsByOffset parts_;
};

TEST_F(CoverRangeTest, ContiguousPartsCoverARangeAcrossThem) {
  Add(0, 100);
  Add(100, 100);
  Add(200, 50);
  EXPECT_TRUE(CoverRange(parts_, 0, 250));
  EXPECT_EQ(Offsets(50, 150), (std::vector<uint64_t>{0, 100}));
  EXPECT_EQ(Offsets(100, 101), (std::vector<uint64_t>{100}));
  EXPECT_EQ(Offsets(199, 250), (std::vector<uint64_t>{100, 200}));
}

TEST_F(CoverRangeTest, AGapBeforeInsideOrAfterThePartsIsNotCovered) {
  Add(100, 100);
  Add(300, 100);
  EXPECT_FALSE(CoverRange(parts_, 50, 150));   // starts before the first part
  EXPECT_FALSE(CoverRange(parts_, 150, 350));  // the gap 200..300
  EXPECT_FALSE(CoverRange(parts_, 350, 401));  // one byte past the last part
  EXPECT_TRUE(Offsets(150, 250).empty());
  EXPECT_EQ(Offsets(300, 400), (std::vector<uint64_t>{300}));
}

TEST_F(CoverRangeTest, NoPartsCoverNothing) {
  EXPECT_FALSE(CoverRange(parts_, 0, 1));
  EXPECT_TRUE(Offsets(0, 1).empty());
}

}  // namespace
}  // namespace bucketfs::prefetch
