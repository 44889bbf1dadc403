#include "prefetch/random_locality.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace bucketfs::prefetch {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kFloor = 64 * kKiB;
constexpr uint64_t kSize = 1ull << 30;
constexpr int kWindow = RandomLocality::kWindow;

// Offsets of 4 KiB reads spread over 1 GiB, each in a floor block of its own.
uint64_t FarOffset(int i) { return static_cast<uint64_t>(i) * 7 * kFloor + 12 * kKiB; }

TEST(RandomLocalityTest, FirstReadsFetchTheFloorThenFarReadsOnlyTheirPages) {
  RandomLocality l(kFloor, 4);
  for (int i = 0; i < kWindow; ++i) {
    const uint64_t o = FarOffset(i);
    const auto r = l.NoteRead(o, o + 4 * kKiB, kSize);
    EXPECT_EQ(r.start, o - o % kFloor) << i;
    EXPECT_EQ(r.end, r.start + kFloor) << i;
  }
  for (int i = kWindow; i < 4 * kWindow; ++i) {
    const uint64_t o = FarOffset(i);
    const auto r = l.NoteRead(o, o + 4 * kKiB, kSize);
    EXPECT_EQ(r.start, o) << i;
    EXPECT_EQ(r.end, o + 4 * kKiB) << i;
  }
  EXPECT_FALSE(l.floor_in_use());
}

TEST(RandomLocalityTest, PagesCoverUnalignedReads) {
  RandomLocality l(kFloor, 4);
  for (int i = 0; i < kWindow; ++i) l.NoteRead(FarOffset(i), FarOffset(i) + 1, kSize);
  const uint64_t o = FarOffset(100) + 100;  // 100 bytes into a page, 5000 bytes long
  const auto r = l.NoteRead(o, o + 5000, kSize);
  EXPECT_EQ(r.start, o - 100);
  EXPECT_EQ(r.end, o - 100 + 8 * kKiB);
  // At the end of the object: cut at its size, never before the read's end.
  const uint64_t size = FarOffset(200) + 6000;
  const auto last = l.NoteRead(FarOffset(200) + 5000, size, size);
  EXPECT_EQ(last.start, FarOffset(200) + 4 * kKiB);
  EXPECT_EQ(last.end, size);
}

TEST(RandomLocalityTest, NearReadsRestoreTheFloorForAWindow) {
  RandomLocality l(kFloor, 4);
  for (int i = 0; i < 2 * kWindow; ++i) l.NoteRead(FarOffset(i), FarOffset(i) + 4 * kKiB, kSize);
  ASSERT_FALSE(l.floor_in_use());
  // Same floor block as the read 3 reads ago: a floor cache would have served
  // it. One such read may be chance: still the pages only.
  const uint64_t back = FarOffset(2 * kWindow - 3) + 20 * kKiB;
  auto r = l.NoteRead(back, back + 4 * kKiB, kSize);
  EXPECT_EQ(r.end - r.start, 4 * kKiB);
  // A second one within the window: the floor again, aligned.
  const uint64_t again = FarOffset(2 * kWindow - 1) + 40 * kKiB;
  r = l.NoteRead(again, again + 4 * kKiB, kSize);
  EXPECT_EQ(r.end - r.start, kFloor);
  EXPECT_EQ(r.start % kFloor, 0u);
  EXPECT_LE(r.start, again);
  for (int i = 0; i < kWindow - 2; ++i) {
    const uint64_t o = FarOffset(1000 + i);
    r = l.NoteRead(o, o + 4 * kKiB, kSize);
    EXPECT_EQ(r.end - r.start, kFloor) << i;  // both near reads still in the window
  }
  const uint64_t o = FarOffset(2000);
  r = l.NoteRead(o, o + 4 * kKiB, kSize);
  EXPECT_EQ(r.end - r.start, 4 * kKiB);
}

TEST(RandomLocalityTest, ReadsFurtherBackThanTheRecentBlocksAreFar) {
  RandomLocality l(kFloor, 4);
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 2 * kWindow; ++i) {
    offsets.push_back(FarOffset(i));
    l.NoteRead(offsets.back(), offsets.back() + 4 * kKiB, kSize);
  }
  // Each read goes back to the block of the read five reads before it: a
  // cache of 4 blocks no longer holds that one, so none is near (two near
  // reads would bring the floor back).
  for (int i = 0; i < kWindow; ++i) {
    const uint64_t o = offsets[offsets.size() - 5];
    offsets.push_back(o);
    const auto r = l.NoteRead(o, o + 4 * kKiB, kSize);
    EXPECT_EQ(r.end - r.start, 4 * kKiB) << i;
  }
}

TEST(RandomLocalityTest, ClusteredReadsKeepTheFloor) {
  // Reads hopping among 4 floor blocks (a file's header, index and a few
  // records): every fetch stays a whole block.
  RandomLocality l(kFloor, 4);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    const uint64_t o = (rng() % 4) * 100 * kFloor + (rng() % 16) * 4 * kKiB;
    const auto r = l.NoteRead(o, o + 4 * kKiB, kSize);
    EXPECT_EQ(r.end - r.start, kFloor) << i;
  }
  EXPECT_TRUE(l.floor_in_use());
}

TEST(RandomLocalityTest, ReadsLargerThanTheFloorAreFetchedAsTheyAre) {
  RandomLocality l(kFloor, 4);
  const uint64_t o = 10 * kFloor + 4 * kKiB;
  auto r = l.NoteRead(o, o + 1024 * kKiB, kSize);
  EXPECT_EQ(r.start, o);
  EXPECT_EQ(r.end, o + 1024 * kKiB);
  // Across two aligned blocks but smaller than the floor: the floor from o.
  const uint64_t p = 20 * kFloor - 4 * kKiB;
  r = l.NoteRead(p, p + 8 * kKiB, kSize);
  EXPECT_EQ(r.start, p);
  EXPECT_EQ(r.end, p + kFloor);
}

}  // namespace
}  // namespace bucketfs::prefetch
