#include "fuse/stat_walkers.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

TEST(StatWalkersTest, AProcessWantsAttributesOnceItLookedUpAFile) {
  StatWalkers w;
  EXPECT_FALSE(w.WantsAttrs(42));
  w.SawFileLookup(42);
  EXPECT_TRUE(w.WantsAttrs(42));
  EXPECT_FALSE(w.WantsAttrs(43));
}

TEST(StatWalkersTest, ForgetsTheProcessSeenLongestAgoWhenFull) {
  StatWalkers w;
  for (pid_t p = 1; p <= static_cast<pid_t>(StatWalkers::kCapacity); ++p) w.SawFileLookup(p);
  w.SawFileLookup(1);  // seen again: now the most recent
  w.SawFileLookup(100000);
  EXPECT_TRUE(w.WantsAttrs(1));
  EXPECT_FALSE(w.WantsAttrs(2));  // the oldest
  EXPECT_TRUE(w.WantsAttrs(3));
  EXPECT_TRUE(w.WantsAttrs(100000));
}

}  // namespace
}  // namespace bucketfs::fs
