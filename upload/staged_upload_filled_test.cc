// Parts filled in memory through a StagedUpload in the mount's shape (parts
// not read back, staged while they upload, rewrites, holes, truncate,
// failures, many writers).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache/staging_file.h"
#include "memory/part_buffer_budget.h"
#include "s3/crc32c.h"
#include "upload/staged_upload.h"
#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

// Counts the staging file's system calls (bytes read and written, and
// whether writes went through the O_DIRECT descriptor).
class CountingOps : public cache::StagingFileOps {
 public:
  ssize_t PWrite(int fd, const void* buf, size_t n, off_t offset) override {
    const ssize_t r = StagingFileOps::PWrite(fd, buf, n, offset);
    if (r > 0) {
      written += r;
      const int flags = ::fcntl(fd, F_GETFL);
      if (flags >= 0 && (flags & O_DIRECT)) written_direct += r;
    }
    return r;
  }
  ssize_t PRead(int fd, void* buf, size_t n, off_t offset) override {
    const ssize_t r = StagingFileOps::PRead(fd, buf, n, offset);
    if (r > 0) read += r;
    return r;
  }
  std::atomic<int64_t> written{0}, written_direct{0}, read{0};
};

// The mount's shape: 1 MiB writes of a 16 MiB-part file, 4 MiB settle, parts
// prepared on the pool.
class FilledPartsTest : public StagedUploadTest {
 protected:
  FilledPartsTest() {
    ctx_.writer.part_size = 1 << 20;
    ctx_.writer.max_parts_in_flight = 4;
    ctx_.staging.settle_bytes = 256 << 10;
    ctx_.staging.ops = ops_;
    ctx_.budget = std::make_shared<memory::PartBufferBudget>(16 << 20);
    ctx_.runner = std::make_shared<base::WorkerPool>(2);
  }
  std::shared_ptr<CountingOps> ops_ = std::make_shared<CountingOps>();
};

TEST_F(FilledPartsTest, SequentialPartsAreNotReadBackAndAreStaged) {
  // A file that starts with a large write (128 KiB here; dd, cp, fio) has
  // every part filled in memory and sent from its buffer: nothing is read
  // back from the staging file. Parts sent before the commit are staged all
  // the same (a later write may seek back to them); the last ones, sent by
  // the commit, are not.
  client_->async_delay = std::chrono::milliseconds(1);
  auto w = Make("filled");
  const std::string data = Pattern((8 << 20) + 4096 + 100, 40);
  for (size_t off = 0; off < data.size(); off += 128 << 10) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 128 << 10))).ok());
  }
  // Staging writes still under way when Commit starts are cut short (see
  // StagedUploadTest.CommitDropsStagingWritesThatNothingWillRead).
  std::static_pointer_cast<base::WorkerPool>(ctx_.runner)->Drain();
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "filled"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 9);
  EXPECT_EQ(ops_->read.load(), 0);
  EXPECT_GE(ops_->written.load(), 7 << 20);
  EXPECT_LE(ops_->written.load(), 8 << 20);
  EXPECT_LE(ctx_.budget->peak(), 16u << 20);
}

TEST_F(FilledPartsTest, RewriteOfASentFilledPartUsesItsStagedBytes) {
  // zipfile/torch.save: a header near the start of a part sent long ago is
  // rewritten at the end. The part's bytes come from the staging file (which
  // got them from the part buffer), so the part is sent again whole.
  client_->async_delay = std::chrono::milliseconds(1);
  auto w = Make("rewrite");
  std::string data = Pattern((6 << 20) + 777, 41);
  for (size_t off = 0; off < data.size(); off += 100000) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 100000))).ok());
  }
  // Part 2 right away (maybe still being staged), part 3 and the last part.
  for (uint64_t at : {(1u << 20) + 10, (2u << 20) + 4000, (6u << 20) + 5}) {
    ASSERT_TRUE(w->Write(at, Bytes("HEADER")).ok());
    data.replace(at, 6, "HEADER");
  }
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "rewrite"), data);
}

TEST_F(FilledPartsTest, HolesInFilledPartsReadAsZeros) {
  // Writes that skip ahead within a part (and past its end) leave zeros, as
  // the staging file would; a write before the end of what a part holds
  // changes summed bytes, so the part is summed again when it is sent (the
  // fake refuses a wrong sum).
  auto w = Make("holes");
  std::string data((5 << 20) + 300, '\0');
  auto put = [&](uint64_t at, const std::string& bytes) {
    ASSERT_TRUE(w->Write(at, Bytes(bytes)).ok());
    data.replace(at, bytes.size(), bytes);
  };
  put(0, Pattern(1 << 20, 42));
  put((1 << 20) + 5000, Pattern(70000, 43));  // part 2 starts with a hole
  put((1 << 20) + 100, "early");              // before what part 2 holds: not in order
  put((3 << 20) + 9, Pattern(1000, 44));      // part 3's tail and part 4 are holes
  put((5 << 20) + 1, Pattern(299, 45));
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "holes"), data);
}

TEST_F(FilledPartsTest, TruncateSpillsFilledParts) {
  auto w = Make("trunc");
  std::string data = Pattern((3 << 20) + 500, 46);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());
  ASSERT_TRUE(w->Truncate((2 << 20) + 100).ok());
  data.resize((2 << 20) + 100);
  ASSERT_TRUE(w->Truncate((2 << 20) + 300).ok());
  data.resize((2 << 20) + 300, '\0');
  ASSERT_TRUE(w->Write(data.size(), Bytes("tail")).ok());
  data += "tail";
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "trunc"), data);
}

TEST_F(FilledPartsTest, RewriteOfABaseFromItsStartIsFilledInMemory) {
  // dd conv=notrunc or fio over an old file: every part is rewritten from
  // its start, so none needs the old bytes and each is filled in memory
  // like a new file's: nothing is read back.
  client_->async_delay = std::chrono::milliseconds(1);
  const std::string base = Pattern((6 << 20) + 300, 50);
  auto w = MakeOver("re-mem", base);
  const std::string fresh = Pattern(base.size(), 51);
  for (size_t off = 0; off < fresh.size(); off += 128 << 10) {
    ASSERT_TRUE(w->Write(off, Bytes(fresh.substr(off, 128 << 10))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "re-mem"), fresh);
  EXPECT_EQ(client_->Calls("GetObject"), 0);
  EXPECT_EQ(ops_->read.load(), 0);
}

TEST_F(FilledPartsTest, AFileThatStartsWithASmallHeaderKeepsItsFirstPartStaged) {
  // zipfile (torch.save, numpy.savez) writes a small header first and comes
  // back to it: the first part stays in the staging file (read back to be
  // sent); the parts after it are filled in memory.
  client_->async_delay = std::chrono::milliseconds(1);
  auto w = Make("zip");
  std::string data = Pattern((3 << 20) + 500, 53);
  ASSERT_TRUE(w->Write(0, Bytes(data.substr(0, 30))).ok());
  for (size_t off = 30; off < data.size(); off += 128 << 10) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 128 << 10))).ok());
  }
  ASSERT_TRUE(w->Write(0, Bytes("PK\x03\x04")).ok());  // the header, rewritten
  data.replace(0, 4, "PK\x03\x04");
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "zip"), data);
  // Part 1 only, read back to be sent (and again if it was on the wire when
  // the header came back); parts 2-4 (3.5 MiB) never.
  EXPECT_GE(ops_->read.load(), 1 << 20);
  EXPECT_LE(ops_->read.load(), 2 << 20);
}

TEST_F(FilledPartsTest, ASmallFileThatStartsWithALargeWriteIsPutFromMemory) {
  // One part's worth or less, first written in a large write: one PutObject
  // from the fill buffer, nothing written to or read from the staging file.
  auto w = Make("small");
  const std::string data = Pattern((512 << 10) + 99, 54);
  ASSERT_TRUE(w->Write(0, Bytes(data.substr(0, 256 << 10))).ok());
  ASSERT_TRUE(w->Write(256 << 10, Bytes(data.substr(256 << 10))).ok());
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "small"), data);
  EXPECT_EQ(client_->Calls("PutObject"), 1);
  EXPECT_EQ(client_->Calls("CreateMultipartUpload"), 0);
  EXPECT_EQ(ops_->read.load(), 0);
  EXPECT_EQ(ops_->written.load(), 0);
  EXPECT_EQ(ctx_.budget->used(), 0u);
}

TEST_F(FilledPartsTest, FilledPartOfABaseKeepsTheOldBytesPastItsRun) {
  // A part filled in memory from its start over old bytes: a write that
  // leaves the run, or the commit before the run reached the part's end,
  // moves it to the staging file with the old bytes the run left.
  client_->async_delay = std::chrono::milliseconds(1);
  const std::string base = Pattern((4 << 20) + 300, 52);
  auto w = MakeOver("re-left", base);
  std::string want = base;
  auto put = [&](uint64_t at, const std::string& bytes) {
    ASSERT_TRUE(w->Write(at, Bytes(bytes)).ok());
    want.replace(at, bytes.size(), bytes);
  };
  const std::string fresh = Pattern((1 << 20) + (512 << 10), 53);
  for (size_t off = 0; off < fresh.size(); off += 128 << 10) put(off, fresh.substr(off, 128 << 10));
  put((1 << 20) + (768 << 10), "SKIP");  // part 2: leaves its run
  put((1 << 20) + (600 << 10), "BACK");  // part 2 again, now staged
  put(3 << 20, Pattern(100 << 10, 54));  // part 4: a run cut short by the commit
  put((3 << 20) + (100 << 10), "RUN");   // ... still in order
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "re-left"), want);
}

TEST_F(FilledPartsTest, TruncateSpillsAFilledPartOfABase) {
  const std::string base = Pattern((4 << 20) + 300, 55);
  auto w = MakeOver("re-trunc", base);
  std::string want = base;
  const std::string fresh = Pattern((1 << 20) + 4096, 56);  // part 2 filled from its start
  ASSERT_TRUE(w->Write(0, Bytes(fresh)).ok());
  want.replace(0, fresh.size(), fresh);
  ASSERT_TRUE(w->Truncate((3 << 20) + 10).ok());  // cuts part 4, spills part 2
  want.resize((3 << 20) + 10);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "re-trunc"), want);
}

TEST_F(FilledPartsTest, FailedStagingWriteFailsTheFile) {
  // A part sent from memory whose staging copy cannot be written: a later
  // rewrite could not be served, so the file fails (sticky), nothing appears.
  struct FailingWrites : CountingOps {
    ssize_t PWrite(int fd, const void* buf, size_t n, off_t offset) override {
      if (offset >= (1 << 20)) {
        errno = EIO;
        return -1;
      }
      return CountingOps::PWrite(fd, buf, n, offset);
    }
  };
  ctx_.staging.ops = std::make_shared<FailingWrites>();
  ctx_.runner = nullptr;  // staged before Write returns
  auto w = Make("stage-fails");
  const std::string data = Pattern(4 << 20, 47);
  Status s = Status::Ok();
  for (size_t off = 0; off < data.size() && s.ok(); off += 1 << 20) {
    s = w->Write(off, Bytes(data.substr(off, 1 << 20)));
  }
  EXPECT_EQ(s.error().errno_value, EIO);
  auto r = w->Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  client_->Drain();
  EXPECT_FALSE(client_->Exists(kBucket, "stage-fails"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
}

TEST_F(FilledPartsTest, ManyWritersShareTheBudgetWithoutStalling) {
  // More writers than fill buffers fit in half the budget: the rest stage
  // their parts, nobody waits forever, every object is right.
  client_->async_delay = std::chrono::milliseconds(1);
  ctx_.budget = std::make_shared<memory::PartBufferBudget>(8 << 20);
  std::vector<std::string> data;
  for (unsigned i = 0; i < 6; ++i) data.push_back(Pattern((4 << 20) + 1000 * i, 50 + i));
  std::vector<std::unique_ptr<StagedUpload>> ws;
  for (size_t i = 0; i < data.size(); ++i) ws.push_back(Make("many-" + std::to_string(i)));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (size_t i = 0; i < data.size(); ++i) {
    threads.emplace_back([&, i] {
      for (size_t off = 0; off < data[i].size(); off += 300000) {
        if (!ws[i]->Write(off, Bytes(data[i].substr(off, 300000))).ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& w : ws) {
    if (!w->Commit().ok()) ++failures;
  }
  client_->Drain();
  EXPECT_EQ(failures.load(), 0);
  for (size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(client_->Data(kBucket, "many-" + std::to_string(i)), data[i]) << i;
  }
  EXPECT_LE(ctx_.budget->peak(), 8u << 20);
}

}  // namespace
}  // namespace bucketfs::upload
