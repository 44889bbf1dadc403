// StagedUpload tests over the in-memory FakeObjectClient: any-offset writes,
// streaming of final parts, re-upload of changed parts (also while the first
// upload is in flight), failures and abort, ENOSPC from staging, the memory
// budget, truncation. Over a base object: staged_upload_base_test.cc; parts
// prepared on a runner: staged_upload_prepare_test.cc; parts filled in
// memory: staged_upload_filled_test.cc.
#include "upload/staged_upload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

// Fails pwrite with a chosen errno once armed.
class FaultyOps : public cache::StagingFileOps {
 public:
  ssize_t PWrite(int fd, const void* buf, size_t n, off_t offset) override {
    if (fail_errno != 0) {
      errno = fail_errno;
      return -1;
    }
    return StagingFileOps::PWrite(fd, buf, n, offset);
  }
  int fail_errno = 0;
};

TEST_F(StagedUploadTest, SmallFileIsOnePutObject) {
  auto w = Make("small");
  ASSERT_TRUE(w->Write(0, Bytes("hello")).ok());
  EXPECT_EQ(w->size(), 5u);
  auto r = w->Commit();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->size, 5u);
  EXPECT_EQ(client_->Data(kBucket, "small"), "hello");
  EXPECT_EQ(client_->Calls("PutObject"), 1);
  EXPECT_EQ(client_->Calls("CreateMultipartUpload"), 0);
  EXPECT_EQ(w->Write(5, Bytes("x")).error().errno_value, EBADF);
  EXPECT_TRUE(w->Commit().ok());  // idempotent
  EXPECT_EQ(client_->Calls("PutObject"), 1);
}

TEST_F(StagedUploadTest, SequentialWritesStreamPartsBeforeCommit) {
  auto w = Make("seq");
  const std::string data = Pattern(10 * 1024 + 17);
  for (size_t off = 0; off < data.size(); off += 100) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 100))).ok());
  }
  EXPECT_GE(client_->Calls("UploadPart"), 8);  // streamed while writing
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "seq"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 11);  // each part exactly once
  EXPECT_EQ(client_->OpenUploads(), 0u);
}

TEST_F(StagedUploadTest, ZipStyleHeaderRewriteReuploadsThePart) {
  auto w = Make("zip");
  std::string expect = std::string(30, 'H') + Pattern(5000) + std::string(100, 'C');
  ASSERT_TRUE(w->Write(0, Bytes(std::string(30, '?'))).ok());  // placeholder header
  for (size_t off = 30; off < 5030; off += 500) {
    ASSERT_TRUE(w->Write(off, Bytes(expect.substr(off, 500))).ok());
  }
  const int before = client_->Calls("UploadPart");
  EXPECT_GE(before, 3);  // part 1 was sent with the placeholder
  ASSERT_TRUE(w->Write(0, Bytes(std::string(30, 'H'))).ok());      // seek back
  ASSERT_TRUE(w->Write(5030, Bytes(std::string(100, 'C'))).ok());  // central directory
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "zip"), expect);
  EXPECT_GT(client_->Calls("UploadPart"), 5);  // 5 parts, part 1 twice
}

TEST_F(StagedUploadTest, ShuffledWritesAndHolesGiveTheRightObject) {
  auto w = Make("shuffled");
  const std::string data = Pattern(20000, 7);
  std::vector<size_t> chunks;
  for (size_t off = 0; off < data.size(); off += 333) chunks.push_back(off);
  std::shuffle(chunks.begin(), chunks.end(), std::mt19937(3));
  for (size_t off : chunks) ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 333))).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "shuffled"), data);

  auto sparse = Make("sparse");
  ASSERT_TRUE(sparse->Write(5000, Bytes("end")).ok());
  ASSERT_TRUE(sparse->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "sparse"), std::string(5000, '\0') + "end");
}

TEST_F(StagedUploadTest, PartChangedWhileInFlightIsSentAgain) {
  client_->hold = true;
  auto w = Make("race");
  std::string data = Pattern(3000);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());  // parts 1 and 2 final: sent, held
  EXPECT_EQ(client_->held.size(), 2u);
  ASSERT_TRUE(w->Write(10, Bytes("NEW")).ok());  // part 1 changes on the wire
  data.replace(10, 3, "NEW");
  client_->ReleaseHeld();  // the stale upload of part 1 finishes now
  client_->hold = false;
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "race"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 4);  // 1, 2, 1 again, 3
}

TEST_F(StagedUploadTest, PartChangedWhileInFlightAtCommitIsSentAgain) {
  client_->async_delay = std::chrono::milliseconds(50);
  auto w = Make("race2");
  std::string data = Pattern(3000, 2);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());     // parts 1 and 2 on the wire
  ASSERT_TRUE(w->Write(1500, Bytes("XY")).ok());  // part 2 changes meanwhile
  data.replace(1500, 2, "XY");
  ASSERT_TRUE(w->Commit().ok());  // must wait for part 2's first upload, then resend it
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "race2"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 4);
}

TEST_F(StagedUploadTest, FailedPartFailsCommitAndAbortsTheUpload) {
  auto w = Make("fail");
  client_->FailNext("UploadPart", EIO);
  (void)w->Write(0, Bytes(Pattern(2500)));  // may already report the failed part
  auto r = w->Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_FALSE(client_->Exists(kBucket, "fail"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_EQ(client_->Calls("AbortMultipartUpload"), 1);
  EXPECT_EQ(w->Commit().error().errno_value, EIO);  // same answer again
}

TEST_F(StagedUploadTest, PartFailingDuringCommitAbortsTheUpload) {
  ctx_.staging.settle_bytes = 1 << 20;  // nothing is final while writing
  auto w = Make("failcommit");
  ASSERT_TRUE(w->Write(0, Bytes(Pattern(2500))).ok());
  EXPECT_EQ(client_->Calls("UploadPart"), 0);
  client_->FailNext("UploadPart", EIO);
  auto r = w->Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_FALSE(client_->Exists(kBucket, "failcommit"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
}

TEST_F(StagedUploadTest, FailedCompleteAborts) {
  auto w = Make("failc");
  ASSERT_TRUE(w->Write(0, Bytes(Pattern(2500))).ok());
  client_->FailNext("CompleteMultipartUpload", EACCES);
  auto r = w->Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EACCES);
  EXPECT_FALSE(client_->Exists(kBucket, "failc"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
}

TEST_F(StagedUploadTest, AbortOrDestroyLeavesNothing) {
  {
    auto w = Make("dropped");
    ASSERT_TRUE(w->Write(0, Bytes(Pattern(4000))).ok());
    EXPECT_EQ(client_->OpenUploads(), 1u);
  }
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_FALSE(client_->Exists(kBucket, "dropped"));
}

TEST_F(StagedUploadTest, StagingEnospcIsSurfacedAndSticky) {
  auto ops = std::make_shared<FaultyOps>();
  ctx_.staging.ops = ops;
  auto w = Make("full");
  ASSERT_TRUE(w->Write(0, Bytes("abc")).ok());
  ops->fail_errno = ENOSPC;
  auto s = w->Write(3, Bytes("def"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, ENOSPC);
  ops->fail_errno = 0;
  EXPECT_EQ(w->Commit().error().errno_value, ENOSPC);
  EXPECT_FALSE(client_->Exists(kBucket, "full"));

  ops->fail_errno = EIO;
  auto w2 = Make("io");
  EXPECT_EQ(w2->Write(0, Bytes("abc")).error().errno_value, EIO);
}

TEST_F(StagedUploadTest, StagingSpaceLimitGivesEnospcAndIsReturnedOnClose) {
  ctx_.space = std::make_shared<cache::StagingSpace>(4096);
  auto a = Make("a");
  ASSERT_TRUE(a->Write(0, Bytes(Pattern(3000))).ok());
  EXPECT_EQ(ctx_.space->used(), 3000u);
  auto b = Make("b");
  EXPECT_EQ(b->Write(0, Bytes(Pattern(2000))).error().errno_value, ENOSPC);
  ASSERT_TRUE(a->Commit().ok());
  EXPECT_EQ(ctx_.space->used(), 0u);  // committed: staging freed
}

TEST_F(StagedUploadTest, MemoryStaysWithinTheBudget) {
  client_->async_delay = std::chrono::milliseconds(2);
  ctx_.budget = std::make_shared<memory::PartBufferBudget>(3 * 1024);
  ctx_.writer.max_parts_in_flight = 8;
  auto w = Make("budget");
  const std::string data = Pattern(64 * 1024, 5);
  for (size_t off = 0; off < data.size(); off += 512) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 512))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "budget"), data);
  EXPECT_LE(ctx_.budget->peak(), 3u * 1024);
  EXPECT_GE(ctx_.budget->peak(), 2u * 1024);  // it did overlap uploads
}

TEST_F(StagedUploadTest, LargeSequentialFileDropsStagedPagesAndStaysCorrect) {
  // Parts read for upload are advised out of the page cache; a later rewrite
  // of one of them (zip header style) must still see the staged bytes.
  auto w = Make("dropped-pages");
  std::string data = Pattern(40 * 1024, 9);
  for (size_t off = 0; off < data.size(); off += 4096) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 4096))).ok());
  }
  ASSERT_TRUE(w->Write(5000, Bytes("HEADER")).ok());
  data.replace(5000, 6, "HEADER");
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "dropped-pages"), data);
}

TEST_F(StagedUploadTest, TruncateShrinksAndGrows) {
  auto w = Make("t");
  ASSERT_TRUE(w->Write(0, Bytes(Pattern(5000))).ok());
  ASSERT_TRUE(w->Truncate(1500).ok());
  EXPECT_EQ(w->size(), 1500u);
  ASSERT_TRUE(w->Truncate(1600).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "t"), Pattern(5000).substr(0, 1500) + std::string(100, '\0'));
}

TEST_F(StagedUploadTest, EveryFailureGivesItsBuffersBack) {
  // A buffer is taken from the shared budget for a base range, a part read
  // back, a part filled in memory or a whole small file; whatever fails after
  // that, the writer gives it back, or the mount's other writers would wait
  // for it for ever.
  const auto Drained = [&] {
    client_->Drain();
    EXPECT_EQ(ctx_.budget->used(), 0u);
  };
  {  // the base range for an in-place change cannot be read
    auto w = MakeOver("based", Pattern(3000, 70));
    client_->FailNext("GetObject", EIO);
    EXPECT_EQ(w->Write(1100, Bytes("x")).error().errno_value, EIO);
    EXPECT_FALSE(w->Commit().ok());
  }
  Drained();
  {  // a whole small file cannot be put
    auto w = Make("small-fails");
    ASSERT_TRUE(w->Write(0, Bytes("abc")).ok());
    client_->FailNext("PutObject", EIO);
    EXPECT_FALSE(w->Commit().ok());
  }
  Drained();
  for (const bool fill : {false, true}) {  // a part read back, or filled, fails to upload
    ctx_.staging.fill_in_memory = fill;
    auto w = Make("part-fails");
    client_->FailNext("UploadPart", EIO);
    (void)w->Write(0, Bytes(Pattern(5000, 71)));
    EXPECT_FALSE(w->Commit().ok());
    w.reset();
    Drained();
  }
  {  // filled parts still held when the file is dropped
    ctx_.staging.settle_bytes = 1 << 20;
    auto w = Make("dropped-fills");
    ASSERT_TRUE(w->Write(0, Bytes(Pattern(3500, 72))).ok());
    EXPECT_GT(ctx_.budget->used(), 0u);
    w->Abort();
  }
  Drained();
}

}  // namespace
}  // namespace bucketfs::upload
