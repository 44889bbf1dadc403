// StagedWriter tests over the in-memory FakeObjectClient: any-offset writes,
// streaming of final parts, re-upload of changed parts (also while the first
// upload is in flight), failures and abort, ENOSPC from staging, the memory
// budget, and writing over a base object.
#include "fuse/staged_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "fuse/part_layout.h"
#include "fuse/testing/fake_object_client.h"
#include "s3/crc32c.h"
#include "s3/memory_poison.h"

namespace bucketfs::fs {
namespace {

using testing::FakeObjectClient;

// Holds UploadPartAsync completions until released (or completes them on a
// background thread after a delay, when `async_delay` is set).
class DeferredClient : public FakeObjectClient {
 public:
  ~DeferredClient() override { Drain(); }
  void UploadPartAsync(const s3::UploadPartParams& p, std::span<const std::byte> body,
                       std::function<void(Result<s3::UploadPartResult>)> done) override {
    if (async_delay.count() > 0) {
      std::lock_guard lock(mu);
      threads.emplace_back([this, p, body, done = std::move(done)] {
        std::this_thread::sleep_for(async_delay);
        done(UploadPart(p, body));
      });
      return;
    }
    if (!hold) return FakeObjectClient::UploadPartAsync(p, body, std::move(done));
    std::lock_guard lock(mu);
    held.push_back([this, p, body, done = std::move(done)] { done(UploadPart(p, body)); });
  }
  void ReleaseHeld() {
    std::deque<std::function<void()>> run;
    {
      std::lock_guard lock(mu);
      run.swap(held);
    }
    for (auto& f : run) f();
  }
  void Drain() {
    std::vector<std::thread> t;
    {
      std::lock_guard lock(mu);
      t.swap(threads);
    }
    for (auto& th : t) th.join();
  }

  bool hold = false;
  std::chrono::milliseconds async_delay{0};
  std::mutex mu;
  std::deque<std::function<void()>> held;
  std::vector<std::thread> threads;
};

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

std::string Pattern(size_t n, unsigned seed = 1) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

class StagedWriterTest : public ::testing::Test {
 protected:
  static constexpr const char* kBucket = "bkt";

  StagedWriterTest() {
    client_->CreateBucketNamed(kBucket);
    dir_ = std::filesystem::temp_directory_path() /
           ("staged_writer_test-" + std::to_string(::getpid()));
    ctx_.client = client_;
    ctx_.writer.part_size = 1024;
    ctx_.writer.max_parts_in_flight = 2;
    ctx_.staging.dir = dir_.string();
    ctx_.staging.settle_bytes = 0;
    ctx_.budget = std::make_shared<UploadBudget>(1 << 20);
    ctx_.space = std::make_shared<cache::StagingSpace>();
    EXPECT_TRUE(cache::EnsureStagingDir(ctx_.staging.dir).ok());
  }
  ~StagedWriterTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<FileWriter> Make(const std::string& key,
                                   std::optional<BaseObject> base = std::nullopt) {
    return MakeStagedWriter(ctx_, kBucket, key, std::move(base));
  }

  std::shared_ptr<DeferredClient> client_ = std::make_shared<DeferredClient>();
  std::filesystem::path dir_;
  StagingContext ctx_;
};

TEST(PartLayoutTest, BoundariesFollowPartSizeFor) {
  PartLayout l(100);
  EXPECT_EQ(l.Start(0), 0u);
  EXPECT_EQ(l.End(0), 100u);
  EXPECT_EQ(l.IndexOf(99), 0);
  EXPECT_EQ(l.IndexOf(100), 1);
  EXPECT_EQ(l.Start(1000), 100000u);
  EXPECT_EQ(l.SizeOf(1000), 200u);
  EXPECT_EQ(l.IndexOf(100000), 1000);
  EXPECT_EQ(l.IndexOf(100199), 1000);
  EXPECT_EQ(l.IndexOf(100200), 1001);
  EXPECT_EQ(l.Count(0), 0);
  EXPECT_EQ(l.Count(1), 1);
  EXPECT_EQ(l.Count(100), 1);
  EXPECT_EQ(l.Count(101), 2);
  // 10,000 parts of 16 MiB growing reach past 5 TiB.
  PartLayout big(16ull << 20);
  EXPECT_LT(big.Count(5ull << 40), 10000);
}

TEST_F(StagedWriterTest, SmallFileIsOnePutObject) {
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

TEST_F(StagedWriterTest, SequentialWritesStreamPartsBeforeCommit) {
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

TEST_F(StagedWriterTest, ZipStyleHeaderRewriteReuploadsThePart) {
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

TEST_F(StagedWriterTest, ShuffledWritesAndHolesGiveTheRightObject) {
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

TEST_F(StagedWriterTest, PartChangedWhileInFlightIsSentAgain) {
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

TEST_F(StagedWriterTest, PartChangedWhileInFlightAtCommitIsSentAgain) {
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

TEST_F(StagedWriterTest, FailedPartFailsCommitAndAbortsTheUpload) {
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

TEST_F(StagedWriterTest, PartFailingDuringCommitAbortsTheUpload) {
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

TEST_F(StagedWriterTest, FailedCompleteAborts) {
  auto w = Make("failc");
  ASSERT_TRUE(w->Write(0, Bytes(Pattern(2500))).ok());
  client_->FailNext("CompleteMultipartUpload", EACCES);
  auto r = w->Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EACCES);
  EXPECT_FALSE(client_->Exists(kBucket, "failc"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
}

TEST_F(StagedWriterTest, AbortOrDestroyLeavesNothing) {
  {
    auto w = Make("dropped");
    ASSERT_TRUE(w->Write(0, Bytes(Pattern(4000))).ok());
    EXPECT_EQ(client_->OpenUploads(), 1u);
  }
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_FALSE(client_->Exists(kBucket, "dropped"));
}

TEST_F(StagedWriterTest, StagingEnospcIsSurfacedAndSticky) {
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

TEST_F(StagedWriterTest, StagingSpaceLimitGivesEnospcAndIsReturnedOnClose) {
  ctx_.space = std::make_shared<cache::StagingSpace>(4096);
  auto a = Make("a");
  ASSERT_TRUE(a->Write(0, Bytes(Pattern(3000))).ok());
  EXPECT_EQ(ctx_.space->used(), 3000u);
  auto b = Make("b");
  EXPECT_EQ(b->Write(0, Bytes(Pattern(2000))).error().errno_value, ENOSPC);
  ASSERT_TRUE(a->Commit().ok());
  EXPECT_EQ(ctx_.space->used(), 0u);  // committed: staging freed
}

TEST_F(StagedWriterTest, MemoryStaysWithinTheBudget) {
  client_->async_delay = std::chrono::milliseconds(2);
  ctx_.budget = std::make_shared<UploadBudget>(3 * 1024);
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

TEST(UploadBudgetTest, BuffersAreReusedWithinTheCapacity) {
  UploadBudget budget(3000);
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

TEST(UploadBudgetTest, LargePartBuffersAreOnHugePageBoundariesAndAdvised) {
  // A part buffer of 2 MiB or more is its own mapping, aligned to 2 MiB and
  // advised for transparent huge pages (fresh memory costs a fault per page:
  // a 512th of the faults with huge pages); small ones come from the heap.
  UploadBudget budget(64 << 20);
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

TEST(UploadBudgetTest, KeptBuffersArePoisonedUnderAsan) {
  // A body still read after Give (an upload finishing late) must be reported,
  // not read another part's bytes from the reused buffer.
  if (!kAsanBuild) GTEST_SKIP() << "needs AddressSanitizer";
  UploadBudget budget(3000);
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

TEST_F(StagedWriterTest, LargeSequentialFileDropsStagedPagesAndStaysCorrect) {
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

TEST_F(StagedWriterTest, AppendToLargeObjectCopiesUnchangedParts) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  client_->Put(kBucket, "big", base);
  auto head = client_->HeadObject({kBucket, "big", "", ""});
  ASSERT_TRUE(head.ok());
  auto w = Make("big", BaseObject{head->etag, base.size()});
  EXPECT_EQ(w->size(), base.size());
  const std::string tail = Pattern(1 << 20, 4);
  ASSERT_TRUE(w->Write(base.size(), Bytes(tail)).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "big"), base + tail);
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 2);  // parts 1, 2 server side
  EXPECT_EQ(client_->Calls("UploadPart"), 1);      // part 3: base tail + appended bytes
  EXPECT_EQ(client_->Calls("GetObject"), 1);
}

TEST_F(StagedWriterTest, InPlaceChangeOfSmallObjectIsOnePut) {
  client_->Put(kBucket, "s", "hello world");
  auto head = client_->HeadObject({kBucket, "s", "", ""});
  auto w = Make("s", BaseObject{head->etag, 11});
  ASSERT_TRUE(w->Write(6, Bytes("WORLD")).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "s"), "hello WORLD");
  EXPECT_EQ(client_->Calls("PutObject"), 1);  // the commit (setup does not count)

  // Opened and closed without a change: nothing is uploaded.
  auto same = Make("s", BaseObject{"\"whatever\"", 11});
  ASSERT_TRUE(same->Commit().ok());
  EXPECT_EQ(client_->Calls("PutObject"), 1);
}

TEST_F(StagedWriterTest, TruncateShrinksAndGrows) {
  auto w = Make("t");
  ASSERT_TRUE(w->Write(0, Bytes(Pattern(5000))).ok());
  ASSERT_TRUE(w->Truncate(1500).ok());
  EXPECT_EQ(w->size(), 1500u);
  ASSERT_TRUE(w->Truncate(1600).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "t"), Pattern(5000).substr(0, 1500) + std::string(100, '\0'));
}

// Part preparation on a runner (the mount's WorkerPool): the write that makes
// a part final returns before the part is read back, summed and sent.

// Holds posted tasks until RunHeld (or runs them at once when not holding).
class HeldRunner : public TaskRunner {
 public:
  void Post(std::function<void()> task) override {
    {
      std::lock_guard lock(mu);
      if (hold) {
        held.push_back(std::move(task));
        return;
      }
    }
    task();
  }
  size_t Held() {
    std::lock_guard lock(mu);
    return held.size();
  }
  void RunHeld(bool keep_holding) {
    std::deque<std::function<void()>> run;
    {
      std::lock_guard lock(mu);
      run.swap(held);
      hold = keep_holding;
    }
    for (auto& f : run) f();
  }

  std::mutex mu;
  bool hold = true;
  std::deque<std::function<void()>> held;
};

// Fails pread with a chosen errno once armed.
class FaultyReadOps : public cache::StagingFileOps {
 public:
  ssize_t PRead(int fd, void* buf, size_t n, off_t offset) override {
    if (fail_errno.load() != 0) {
      errno = fail_errno.load();
      return -1;
    }
    return StagingFileOps::PRead(fd, buf, n, offset);
  }
  std::atomic<int> fail_errno{0};
};

TEST_F(StagedWriterTest, WriteReturnsBeforeThePartIsReadBackAndSent) {
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

TEST_F(StagedWriterTest, PartChangedBeforeItIsReadBackIsSentAgain) {
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

TEST_F(StagedWriterTest, FailedReadBackFailsTheWriteAfterAndCommitAborts) {
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

TEST_F(StagedWriterTest, DestroyWaitsForPartsStillBeingPrepared) {
  // Tasks still queued on the pool when the writer goes must not outlive it
  // (ASan reports a task touching a destroyed writer).
  client_->async_delay = std::chrono::milliseconds(5);
  ctx_.runner = std::make_shared<WorkerPool>(1);
  for (int round = 0; round < 5; ++round) {
    auto w = Make("gone");
    ASSERT_TRUE(w->Write(0, Bytes(Pattern(8000, round))).ok());
  }
  client_->Drain();
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_FALSE(client_->Exists(kBucket, "gone"));
}

TEST_F(StagedWriterTest, ParallelWritersOnThePoolStayWithinTheBudget) {
  // Four writers at once, parts prepared on two threads, uploads completing
  // on other threads: every object is right, and the shared budget (six
  // parts, less than four writers' windows) is never exceeded.
  client_->async_delay = std::chrono::milliseconds(1);
  ctx_.runner = std::make_shared<WorkerPool>(2);
  ctx_.budget = std::make_shared<UploadBudget>(6 * 1024);
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

TEST_F(StagedWriterTest, PartsCarryTheSumComputedWhileReadingThem) {
  // The sum goes with the part (the fake, like S3, refuses one that does not
  // match the body), computed by the writer piece by piece: parts larger than
  // a piece, and a short last part.
  struct Recording : FakeObjectClient {
    void UploadPartAsync(const s3::UploadPartParams& p, std::span<const std::byte> body,
                         std::function<void(Result<s3::UploadPartResult>)> done) override {
      {
        std::lock_guard lock(mu);
        sums.push_back(p.crc32c);
        expected.push_back(s3::Crc32cBase64(body));
      }
      FakeObjectClient::UploadPartAsync(p, body, std::move(done));
    }
    std::mutex mu;
    std::vector<std::string> sums, expected;
  };
  auto client = std::make_shared<Recording>();
  client->CreateBucketNamed(kBucket);
  ctx_.client = client;
  ctx_.writer.part_size = 600 << 10;  // 2.3 pieces of 256 KiB
  ctx_.budget = std::make_shared<UploadBudget>(8 << 20);
  ctx_.runner = std::make_shared<WorkerPool>(2);
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
class FilledPartsTest : public StagedWriterTest {
 protected:
  FilledPartsTest() {
    ctx_.writer.part_size = 1 << 20;
    ctx_.writer.max_parts_in_flight = 4;
    ctx_.staging.settle_bytes = 256 << 10;
    ctx_.staging.ops = ops_;
    ctx_.budget = std::make_shared<UploadBudget>(16 << 20);
    ctx_.runner = std::make_shared<WorkerPool>(2);
  }
  std::shared_ptr<CountingOps> ops_ = std::make_shared<CountingOps>();
};

TEST_F(FilledPartsTest, SequentialPartsAreNotReadBackAndAreStaged) {
  // Every part after the first is filled in memory and sent from its buffer:
  // only the first part is read back from the staging file. Parts sent before
  // the commit are staged all the same (a later write may seek back to them);
  // the last ones, sent by the commit, are not.
  client_->async_delay = std::chrono::milliseconds(1);
  auto w = Make("filled");
  const std::string data = Pattern((8 << 20) + 4096 + 100, 40);
  for (size_t off = 0; off < data.size(); off += 128 << 10) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 128 << 10))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  client_->Drain();
  EXPECT_EQ(client_->Data(kBucket, "filled"), data);
  EXPECT_EQ(client_->Calls("UploadPart"), 9);
  EXPECT_EQ(ops_->read.load(), 1 << 20);  // part 1 only
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
  std::vector<std::unique_ptr<FileWriter>> ws;
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

TEST(UploadBudgetTest, FillBuffersStayWithinHalfTheCapacity) {
  UploadBudget budget(4000);
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

TEST(WorkerPoolTest, RunsEveryTaskAndDrainsTheQueueWhenDestroyed) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(2);
    for (int i = 0; i < 100; ++i) {
      pool.Post([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 100);
}

}  // namespace
}  // namespace bucketfs::fs
