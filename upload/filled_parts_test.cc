// Parts filled in memory (upload/filled_parts.h): FilledParts on its own, and
// through a StagedUpload in the mount's shape (parts not read back, staged
// while they upload, rewrites, holes, truncate, failures, many writers).
#include "upload/filled_parts.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cache/staging_file.h"
#include "upload/part_layout.h"
#include "upload/staged_upload.h"
#include "upload/testing/staged_upload_fixture.h"
#include "upload/upload_budget.h"
#include "s3/crc32c.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

// FilledParts on its own: parts of 1000 bytes from a budget of 8000 (fill
// buffers up to 4000 in all, each at most 2000).
class FilledPartsUnitTest : public ::testing::Test {
 protected:
  static std::string Body(const PartBuffer& b) {
    return {reinterpret_cast<const char*>(b.data.get()), static_cast<size_t>(b.size)};
  }
  static uint32_t Sum(const std::string& s) { return s3::Crc32c(Bytes(s)); }

  std::shared_ptr<UploadBudget> budget_ = std::make_shared<UploadBudget>(8000);
};

TEST_F(FilledPartsUnitTest, InOrderWritesCarryTheirSum) {
  FilledParts fills(budget_, /*crc32c=*/true);
  ASSERT_TRUE(fills.Start(1, 1000));
  EXPECT_TRUE(fills.Has(1));
  const std::string a = Pattern(300, 60), b = Pattern(500, 61);
  fills.Write(1, 0, Bytes(a));
  fills.Write(1, 300, Bytes(b));
  FilledParts::Sent sent = fills.Take(1, 800);
  EXPECT_FALSE(fills.Has(1));
  EXPECT_EQ(Body(sent.body), a + b);
  ASSERT_TRUE(sent.crc32c.has_value());
  EXPECT_EQ(*sent.crc32c, Sum(a + b));
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, HolesAreZerosAndInTheSum) {
  // A write past what the part holds, and a short part's end: zeros, as the
  // staging file would read, summed with the rest.
  FilledParts fills(budget_, /*crc32c=*/true);
  ASSERT_TRUE(fills.Start(2, 1000));
  const std::string a = Pattern(100, 62);
  fills.Write(2, 200, Bytes(a));
  FilledParts::Sent sent = fills.Take(2, 700);
  const std::string expect = std::string(200, '\0') + a + std::string(400, '\0');
  EXPECT_EQ(Body(sent.body), expect);
  ASSERT_TRUE(sent.crc32c.has_value());
  EXPECT_EQ(*sent.crc32c, Sum(expect));
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, AWriteBackIntoSummedBytesDropsTheSum) {
  FilledParts fills(budget_, /*crc32c=*/true);
  ASSERT_TRUE(fills.Start(1, 1000));
  std::string expect = Pattern(400, 63);
  fills.Write(1, 0, Bytes(expect));
  fills.Write(1, 10, Bytes("back"));
  expect.replace(10, 4, "back");
  FilledParts::Sent sent = fills.Take(1, 400);
  EXPECT_EQ(Body(sent.body), expect);
  EXPECT_FALSE(sent.crc32c.has_value());  // the sender sums the part itself
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, PartsWithoutCrc32cCarryNoSum) {
  FilledParts fills(budget_, /*crc32c=*/false);
  ASSERT_TRUE(fills.Start(1, 1000));
  fills.Write(1, 0, Bytes("abc"));
  FilledParts::Sent sent = fills.Take(1, 3);
  EXPECT_EQ(Body(sent.body), "abc");
  EXPECT_FALSE(sent.crc32c.has_value());
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, FillsAreBoundedPerWriterAndByTheBudget) {
  FilledParts a(budget_, true), b(budget_, true);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(a.Start(i, 1000)) << i;
  EXPECT_TRUE(a.Full());
  ASSERT_TRUE(b.Start(1, 1000));   // 4000: half the budget
  EXPECT_FALSE(b.Start(2, 1000));  // would pass half
  EXPECT_FALSE(b.Has(2));
  // Sent parts no longer count as fills.
  FilledParts::Sent sent = a.Take(3, 1000);
  EXPECT_FALSE(a.Full());
  EXPECT_TRUE(b.Start(2, 1000));
  budget_->Give(std::move(sent.body));
}

TEST_F(FilledPartsUnitTest, ReleaseAndDestructionGiveEveryBufferBack) {
  {
    FilledParts fills(budget_, true);
    ASSERT_TRUE(fills.Start(1, 2000));
    ASSERT_TRUE(fills.Start(2, 2000));
    EXPECT_FALSE(FilledParts(budget_, true).Start(3, 1));  // half the budget is taken
    fills.Release();
    EXPECT_FALSE(fills.Has(1));
    ASSERT_TRUE(fills.Start(1, 2000));
    ASSERT_TRUE(fills.Start(2, 2000));
  }
  // Had the destructor kept them, half the budget would still be fills.
  FilledParts fills(budget_, true);
  EXPECT_TRUE(fills.Start(1, 2000));
  EXPECT_TRUE(fills.Start(2, 2000));
}

TEST_F(FilledPartsUnitTest, SpillWritesEachPartAtItsPlace) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("filled_parts_test-" + std::to_string(::getpid()));
  ASSERT_TRUE(cache::EnsureStagingDir(dir.string()).ok());
  auto staging = cache::StagingFile::Create(dir.string(), nullptr, nullptr);
  ASSERT_TRUE(staging.ok()) << staging.error().ToString();
  const PartLayout layout(1000);
  FilledParts fills(budget_, true);
  ASSERT_TRUE(fills.Start(1, 1000));
  ASSERT_TRUE(fills.Start(3, 1000));
  const std::string a = Pattern(1000, 64), b = Pattern(50, 65);
  fills.Write(1, 0, Bytes(a));
  fills.Write(3, 20, Bytes(b));
  ASSERT_TRUE(fills.Spill(**staging, layout).ok());
  EXPECT_FALSE(fills.Has(1));
  EXPECT_FALSE(fills.Has(3));
  std::string got(3070, '?');
  ASSERT_TRUE((*staging)->Read(0, std::as_writable_bytes(std::span(got.data(), got.size()))).ok());
  EXPECT_EQ(got, std::string(1000, '\0') + a + std::string(1000, '\0') + std::string(20, '\0') + b);
  staging->reset();
  std::filesystem::remove_all(dir);
}

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
    ctx_.budget = std::make_shared<UploadBudget>(16 << 20);
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
  ctx_.budget = std::make_shared<UploadBudget>(8 << 20);
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
