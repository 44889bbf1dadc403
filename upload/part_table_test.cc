// PartTable: generations, the pending set, sends that race with writes,
// copies, the staging flags and the first error, without threads or files.
#include "upload/part_table.h"

#include <gtest/gtest.h>

namespace bucketfs::upload {
namespace {

s3::UploadPartResult Etag(const std::string& etag) { return {etag, "crc-" + etag}; }

// The pending parts, lowest first.
std::vector<int> Pending(const PartTable& t) {
  std::vector<int> out;
  t.FirstReady([&](int i) {
    out.push_back(i);
    return true;
  });
  return out;
}

TEST(PartTableTest, TouchedPartsArePendingInOrder) {
  PartTable t;
  EXPECT_TRUE(t.Untouched(3));
  t.Touch(3);
  t.Touch(1);
  EXPECT_FALSE(t.Untouched(3));
  EXPECT_TRUE(t.Untouched(2));
  const PartTable::Ready all = t.FirstReady([](int) { return true; });
  EXPECT_EQ(all.next, 1);
  EXPECT_EQ(all.count, 2u);
  // Readiness stops at the first part that is not ready.
  const PartTable::Ready low = t.FirstReady([](int i) { return i < 2; });
  EXPECT_EQ(low.next, 1);
  EXPECT_EQ(low.count, 1u);
  EXPECT_EQ(t.FirstReady([](int) { return false; }).next, -1);
  EXPECT_TRUE(t.CleanBelow(1));
  EXPECT_FALSE(t.CleanBelow(2));
}

TEST(PartTableTest, ASentPartIsCleanAndCompletes) {
  PartTable t;
  t.Touch(0);
  const uint64_t gen = t.StartSend(0, /*staging=*/false);
  EXPECT_EQ(t.in_flight(), 1);
  EXPECT_TRUE(t.CleanBelow(1));  // in flight: not pending
  EXPECT_FALSE(t.Completed(1, "k").ok());
  t.SendDone(0, gen, Etag("e1"));
  EXPECT_EQ(t.in_flight(), 0);
  auto done = t.Completed(1, "k");
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].part_number, 1);
  EXPECT_EQ((*done)[0].etag, "e1");
  EXPECT_EQ((*done)[0].checksum_crc32c, "crc-e1");
}

TEST(PartTableTest, APartChangedOnTheWireGoesAgainAndKeepsTheLastEtag) {
  PartTable t;
  t.Touch(0);
  const uint64_t first = t.StartSend(0, false);
  t.Touch(0);                    // a write while it is on the wire
  EXPECT_TRUE(t.CleanBelow(1));  // re-queued only when that upload ends
  t.SendDone(0, first, Etag("old"));
  EXPECT_FALSE(t.CleanBelow(1));
  EXPECT_FALSE(t.Completed(1, "k").ok());  // "old" holds the older bytes
  const uint64_t second = t.StartSend(0, false);
  EXPECT_NE(second, first);
  t.SendDone(0, second, Etag("new"));
  auto done = t.Completed(1, "k");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ((*done)[0].etag, "new");
}

TEST(PartTableTest, AFailedSendIsPendingAgainAndTheFirstErrorIsKept) {
  PartTable t;
  t.Touch(0);
  t.Touch(1);
  const uint64_t g0 = t.StartSend(0, false);
  const uint64_t g1 = t.StartSend(1, false);
  t.SendDone(0, g0, MakeError(EIO, "First", "first"));
  t.SendDone(1, g1, MakeError(EIO, "Second", "second"));
  ASSERT_TRUE(t.first_error().has_value());
  EXPECT_EQ(t.first_error()->code, "First");
  EXPECT_EQ(Pending(t), (std::vector<int>{0, 1}));
}

TEST(PartTableTest, TheInOrderRunFromAPartsStartNeedsNoBaseBytes) {
  PartTable t;
  // Part 1 spans [100, 200) and holds base bytes up to 180.
  EXPECT_TRUE(t.ExtendsPrefix(1, 100, 100, 150, 180));
  EXPECT_TRUE(t.ExtendsPrefix(1, 100, 150, 160, 180));
  EXPECT_FALSE(t.ExtendsPrefix(1, 100, 170, 175, 180));  // leaves the run
  EXPECT_EQ(t.Materialize(1, 100), std::optional<uint64_t>(160));
  EXPECT_EQ(t.Materialize(1, 100), std::nullopt);  // staged already
  // A run that covers every base byte needs no fetch at all.
  EXPECT_TRUE(t.ExtendsPrefix(2, 200, 200, 300, 280));
  EXPECT_EQ(t.Materialize(2, 200), std::nullopt);
  EXPECT_TRUE(t.ExtendsPrefix(2, 200, 250, 260, 280));  // anything goes now
}

TEST(PartTableTest, CopiedPartsAreCleanUntilTheUploadIsForgotten) {
  PartTable t;
  t.Copied(0, Etag("copy"));
  t.Touch(1);
  t.SendDone(1, t.StartSend(1, false), Etag("sent"));
  ASSERT_TRUE(t.Completed(2, "k").ok());
  t.ForgetUploads();
  EXPECT_FALSE(t.Completed(2, "k").ok());
  // Only the touched part goes again; the copied one is copied again.
  EXPECT_EQ(Pending(t), (std::vector<int>{1}));
  EXPECT_TRUE(t.Untouched(0));
}

TEST(PartTableTest, StagingWritesAreCountedAndRememberTheCut) {
  PartTable t;
  t.Touch(2);
  t.StartSend(2, /*staging=*/true);
  EXPECT_EQ(t.staging_writes(), 1);
  EXPECT_TRUE(t.StagingPending(2));
  EXPECT_FALSE(t.StagingPending(7));
  t.StagingDone(2, /*cut=*/true);
  EXPECT_EQ(t.staging_writes(), 0);
  EXPECT_FALSE(t.StagingPending(2));
  EXPECT_TRUE(t.StagingCut(2));
  EXPECT_FALSE(t.StagingCut(7));
}

}  // namespace
}  // namespace bucketfs::upload
