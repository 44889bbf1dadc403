// StagedUpload with parts prepared on a runner (the mount's WorkerPool): the
// write that makes a part final returns before the part is read back, summed
// and sent; changes and failures meanwhile; writers in parallel on the pool.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "s3/crc32c.h"
#include "upload/staged_upload.h"
#include "upload/testing/staged_upload_fixture.h"
#include "upload/testing/staging_fakes.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Eventually;
using testing::FakeObjectClient;
using testing::FaultyReadOps;
using testing::HeldRunner;
using testing::Pattern;
using testing::StagedUploadTest;
using testing::StuckDiskOps;

}

TEST_F(StagedUploadTest, PartsUploadWhileTheirStagingWritesWaitOnTheDisk) {
  // With 4 writers, the runner's threads spent their time in staging writes
  // while the next parts waited to start: staging has its own runner.
  auto ops = std::make_shared<StuckDiskOps>(/*from=*/1024);  // every filled part's write
  ctx_.staging.ops = ops;
  ctx_.runner = std::make_shared<base::WorkerPool>(1);
  ctx_.stager = std::make_shared<base::WorkerPool>(1);
  ctx_.writer.max_parts_in_flight = 8;
  auto w = Make("stuck-disk");
  const std::string data = Pattern(4096, 14);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());  // part 0 staged, 1-3 filled; all final
  EXPECT_TRUE(Eventually([&] { return client_->Calls("UploadPart") == 4; }))
      << client_->Calls("UploadPart") << " parts uploaded while the disk was stuck";
  EXPECT_TRUE(Eventually([&] { return ops->calls() == 1; }));  // stuck in part 1's write
  EXPECT_EQ(client_->Calls("UploadPart"), 4);
  ops->Release();
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "stuck-disk"), data);
}

TEST_F(StagedUploadTest, CommitDropsStagingWritesThatNothingWillRead) {
  // Once Commit has sent the last parts, no write can come back to a part
  // already sent: its staging write stops at the next piece, and Commit (so
  // close()) does not wait for the disk.
  auto ops = std::make_shared<StuckDiskOps>(/*from=*/1024);
  ctx_.staging.ops = ops;
  ctx_.staging.stage_piece = 256;  // part 1 is staged in four pieces
  ctx_.stager = std::make_shared<base::WorkerPool>(1);
  auto w = Make("cut");
  const std::string data = Pattern(3000, 15);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());  // parts 0 and 1 sent; part 1 being staged
  ASSERT_TRUE(Eventually([&] { return ops->calls() == 1; }));
  ASSERT_EQ(client_->Calls("UploadPart"), 2);
  auto committed = std::async(std::launch::async, [&] { return w->Commit(); });
  const bool returned = committed.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "Commit waited for a staging write stuck on the disk";
  ops->Release();
  auto r = committed.get();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(client_->Data(kBucket, "cut"), data);
  w.reset();                      // waits for the staging write under way
  EXPECT_EQ(ops->bytes(), 256u);  // the piece under way, not the rest of part 1
  EXPECT_EQ(ctx_.budget->used(), 0u);
}

TEST_F(StagedUploadTest, StagingWriteFailingAfterTheCutDoesNotFailTheCommit) {
  // The disk fills while the last parts upload: the staging write that then
  // fails was needed by nothing, and the object is whole.
  auto ops = std::make_shared<StuckDiskOps>(/*from=*/1024);
  ctx_.staging.ops = ops;
  ctx_.staging.stage_piece = 256;
  auto stager = std::make_shared<base::WorkerPool>(1);
  ctx_.stager = stager;
  auto w = Make("full-disk-late");
  const std::string data = Pattern(3000, 16);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());
  ASSERT_TRUE(Eventually([&] { return ops->calls() == 1; }));
  client_->hold = true;  // the last part's upload waits until the staging write failed
  auto committed = std::async(std::launch::async, [&] { return w->Commit(); });
  EXPECT_TRUE(Eventually([&] {
    MutexLock lock(client_->mu);
    return client_->held.size() == 1;  // part 2, sent by Commit
  }));
  ops->FailWith(ENOSPC);
  ops->Release();
  stager->Drain();  // the failed staging write has ended
  client_->ReleaseHeld();
  auto r = committed.get();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(client_->Data(kBucket, "full-disk-late"), data);
}

TEST_F(StagedUploadTest, WriteReturnsBeforeThePartIsReadBackAndSent) {
  ctx_.staging.fill_in_memory = false;  // parts read back from the staging file
  auto runner = std::make_shared<HeldRunner>();
  ctx_.runner = runner;
  auto w = Make("prep");
  const std::string data = Pattern(3000, 11);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());  // parts 1 and 2 final
  EXPECT_EQ(runner->Held(), 2u);               // taken, not yet read back
  EXPECT_EQ(client_->Calls("UploadPart"), 0);
  EXPECT_EQ(ctx_.budget->peak(), 2048u);  // their buffers were taken by Write
  runner->RunHeld(/*keep_holding=*/false);
  EXPECT_EQ(client_->Calls("UploadPart"), 2);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "prep"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 3);
}

TEST_F(StagedUploadTest, PartChangedBeforeItIsReadBackIsSentAgain) {
  ctx_.staging.fill_in_memory = false;  // parts read back from the staging file
  auto runner = std::make_shared<HeldRunner>();
  ctx_.runner = runner;
  auto w = Make("prep-race");
  std::string data = Pattern(3000, 12);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());
  ASSERT_EQ(runner->Held(), 2u);
  ASSERT_TRUE(w->Write(1030, Bytes("ZZ")).ok());  // part 2 changes before its read-back
  data.replace(1030, 2, "ZZ");
  runner->RunHeld(/*keep_holding=*/false);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "prep-race"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 4);  // 1, 2, 2 again, 3
}

TEST_F(StagedUploadTest, FailedReadBackFailsTheWriteAfterAndCommitAborts) {
  ctx_.staging.fill_in_memory = false;  // parts read back from the staging file
  auto ops = std::make_shared<FaultyReadOps>();
  ctx_.staging.ops = ops;
  auto runner = std::make_shared<HeldRunner>();
  ctx_.runner = runner;
  auto w = Make("readback");
  ASSERT_TRUE(w->Write(0, Bytes(Pattern(3000))).ok());
  ops->fail_errno = EIO;
  runner->RunHeld(/*keep_holding=*/false);
  EXPECT_EQ(client_->Calls("UploadPart"), 0);
  EXPECT_EQ(w->Write(3000, Bytes("x")).error().errno_value, EIO);  // sticky
  ops->fail_errno = 0;
  auto r = w->Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_FALSE(client_->Exists(kBucket, "readback"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_EQ(client_->Calls("AbortMultipartUpload"), 1);
  EXPECT_EQ(ctx_.budget->peak(), 2048u);
}

// Open descriptors of files in `dir` (a staging file is anonymous: its
// link reads "DIR/#INODE (deleted)").
int OpenFilesIn(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(e.path(), ec);
    if (!ec && target.string().rfind(dir + "/", 0) == 0) ++n;
  }
  return n;
}

TEST_F(StagedUploadTest, CommitReturnsBeforeTheStagingFileIsClosed) {
  // Freeing a large staging file can wait on the disk; the upload's outcome
  // does not depend on it, so Commit leaves the last close to the runner and
  // counts the space free at once.
  ctx_.staging.settle_bytes = 0;  // both parts final with the last write
  auto runner = std::make_shared<HeldRunner>();
  ctx_.runner = runner;
  auto w = Make("close-later");
  const std::string data = Pattern(2048, 13);  // two whole parts
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());
  ASSERT_EQ(runner->Held(), 2u);
  runner->RunHeld(/*keep_holding=*/true);  // both sent; Commit only completes
  ASSERT_GT(OpenFilesIn(ctx_.staging.dir), 0);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "close-later"), data);
  EXPECT_EQ(ctx_.space->used(), 0u);
  EXPECT_GT(OpenFilesIn(ctx_.staging.dir), 0);  // still open: its close is queued
  EXPECT_EQ(runner->Held(), 1u);
  runner->RunHeld(/*keep_holding=*/false);
  EXPECT_EQ(OpenFilesIn(ctx_.staging.dir), 0);
}

TEST_F(StagedUploadTest, StagingFileIsClosedOnTheCloserNotTheRunner) {
  // A close that waits on the disk (ext4 discard) must not hold up the
  // runner, which sends the other files' parts.
  ctx_.staging.settle_bytes = 0;
  auto runner = std::make_shared<HeldRunner>();
  auto closer = std::make_shared<HeldRunner>();
  ctx_.runner = runner;
  ctx_.closer = closer;
  auto w = Make("closer");
  const std::string data = Pattern(2048, 17);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());
  runner->RunHeld(/*keep_holding=*/true);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "closer"), data);
  EXPECT_EQ(runner->Held(), 0u);
  EXPECT_EQ(closer->Held(), 1u);
  EXPECT_GT(OpenFilesIn(ctx_.staging.dir), 0);
  closer->RunHeld(/*keep_holding=*/false);
  EXPECT_EQ(OpenFilesIn(ctx_.staging.dir), 0);
}

TEST_F(StagedUploadTest, DestroyWaitsForPartsStillBeingPrepared) {
  // Tasks still queued on the pool when the writer goes must not outlive it
  // (ASan reports a task touching a destroyed writer).
  client_->async_delay = std::chrono::milliseconds(5);
  ctx_.runner = std::make_shared<base::WorkerPool>(1);
  for (int round = 0; round < 5; ++round) {
    auto w = Make("gone");
    ASSERT_TRUE(w->Write(0, Bytes(Pattern(8000, round))).ok());
  }
  client_->Drain();
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_FALSE(client_->Exists(kBucket, "gone"));
}

TEST_F(StagedUploadTest, ParallelWritersOnThePoolStayWithinTheBudget) {
  // Four writers at once, parts prepared on two threads, uploads completing
  // on other threads: every object is right, and the shared budget (six
  // parts, less than four writers' windows) is never exceeded.
  client_->async_delay = std::chrono::milliseconds(1);
  ctx_.runner = std::make_shared<base::WorkerPool>(2);
  ctx_.budget = std::make_shared<memory::PartBufferBudget>(6 * 1024);
  ctx_.writer.max_parts_in_flight = 4;
  std::vector<std::string> data;
  for (unsigned i = 0; i < 4; ++i) data.push_back(Pattern(40 * 1024 + 100 * i, 20 + i));
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (size_t i = 0; i < data.size(); ++i) {
    writers.emplace_back([&, i] {
      auto w = Make("par-" + std::to_string(i));
      for (size_t off = 0; off < data[i].size(); off += 700) {
        if (!w->Write(off, Bytes(data[i].substr(off, 700))).ok()) ++failures;
      }
      if (!w->Write(7, Bytes("rewrite")).ok()) ++failures;  // part 1 again, maybe in flight
      data[i].replace(7, 7, "rewrite");
      if (!w->Commit().ok()) ++failures;
    });
  }
  for (auto& t : writers) t.join();
  client_->Drain();
  EXPECT_EQ(failures.load(), 0);
  for (size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(client_->Data(kBucket, "par-" + std::to_string(i)), data[i]) << i;
  }
  EXPECT_LE(ctx_.budget->peak(), 6u * 1024);
  EXPECT_EQ(client_->OpenUploads(), 0u);
}

TEST_F(StagedUploadTest, PartsCarryTheSumComputedWhileReadingThem) {
  // The sum goes with the part (the fake, like S3, refuses one that does not
  // match the body), computed by the writer piece by piece: parts larger than
  // a piece, and a short last part.
  struct Recording : FakeObjectClient {
    void UploadPartAsync(const s3::UploadPartParams& p, std::span<const std::byte> body,
                         std::function<void(Result<s3::UploadPartResult>)> done) override {
      {
        MutexLock lock(mu);
        sums.push_back(p.crc32c);
        expected.push_back(s3::Crc32cBase64(body));
      }
      FakeObjectClient::UploadPartAsync(p, body, std::move(done));
    }
    Mutex mu;
    std::vector<std::string> sums, expected;
  };
  auto client = std::make_shared<Recording>();
  client->CreateBucketNamed(kBucket);
  ctx_.client = client;
  ctx_.writer.part_size = 600 << 10;  // 2.3 pieces of 256 KiB
  ctx_.budget = std::make_shared<memory::PartBufferBudget>(8 << 20);
  ctx_.runner = std::make_shared<base::WorkerPool>(2);
  auto w = Make("summed");
  const std::string data = Pattern((2 << 20) + 333, 30);
  for (size_t off = 0; off < data.size(); off += 65536) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 65536))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client->Data(kBucket, "summed"), data);
  ASSERT_EQ(client->sums.size(), 4u);
  for (size_t i = 0; i < client->sums.size(); ++i) {
    EXPECT_FALSE(client->sums[i].empty()) << i;
    EXPECT_EQ(client->sums[i], client->expected[i]) << i;
  }
}

}  // namespace
}  // namespace bucketfs::upload
