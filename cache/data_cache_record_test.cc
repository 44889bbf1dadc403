// CacheRecord: which blocks a range holds wholly.
#include "cache/data_cache_record.h"

#include <gtest/gtest.h>

namespace bucketfs::cache {
namespace {

// 10 blocks of 100 bytes, the last one 50: [0, 950).
CacheRecord TenBlocks() { return NewRecord("f", 950, 100, 0); }

void ExpectInside(const CacheRecord& r, uint64_t offset, uint64_t end, uint64_t first,
                  uint64_t last) {
  const auto inside = r.BlocksInside(offset, end);
  EXPECT_EQ(inside.first, first) << "[" << offset << ", " << end << ")";
  EXPECT_EQ(inside.last, last) << "[" << offset << ", " << end << ")";
}

TEST(CacheRecordTest, BlocksInsideARangeAreThoseItHoldsWhole) {
  const CacheRecord r = TenBlocks();
  ASSERT_EQ(r.Blocks(), 10u);
  ExpectInside(r, 0, 950, 0, 10);   // the whole object, the short last block included
  ExpectInside(r, 0, 100, 0, 1);    // exactly one block
  ExpectInside(r, 1, 300, 1, 3);    // a partial first block is not inside
  ExpectInside(r, 100, 299, 1, 2);  // nor a partial last one
  ExpectInside(r, 900, 950, 9, 10);
  ExpectInside(r, 900, 949, 9, 9);  // the last block's end not reached: none
  ExpectInside(r, 150, 180, 2, 2);  // inside one block: none
}

TEST(CacheRecordTest, NoBlockSizeMeansNoBlocks) {
  CacheRecord r;
  r.size = 10;
  ExpectInside(r, 0, 10, 0, 0);
}

}  // namespace
}  // namespace bucketfs::cache
