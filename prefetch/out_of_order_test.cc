// Readers that read a file out of its order. Kept parts: a reader that reads
// the records of a file out of file order (a checkpoint's tensors, an
// archive's members) finds the parts its stream fetched ahead and left
// unread, instead of fetching those bytes again; a stream that comes back
// over bytes already read does not fetch them again; kept parts give way to
// the parts reads need when the budget is short. And a lone read ahead (a
// zip's directory at the end of the file) does not leave the stream behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "prefetch/object_reader.h"
#include "prefetch/prefetcher.h"
#include "prefetch/testing/fake_range_source.h"

namespace bucketfs::prefetch {
namespace {

using testing::FakeRangeSource;
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kRecord = 16 * kMiB;

class OutOfOrderTest : public ::testing::Test {
 protected:
  void Init(uint64_t size, uint64_t budget) {
    src_ = std::make_shared<FakeRangeSource>();
    src_->SetLatency(std::chrono::microseconds(300));
    data_ = testing::SharedPattern(size, 11);
    obj_ = src_->Put("bkt", "model.pt", data_, "\"v1\"");
    cfg_.budget_bytes = budget;
    // Parts a few MiB behind the reader go: the records read later lie
    // further back than that.
    cfg_.backward_tolerance = 2 * kMiB;
    // No buffer pool: with one, kept parts live only in the buffers it has
    // spare, which depends on what ran before.
    cfg_.buffer_pool_bytes = 0;
    pf_ = std::make_unique<Prefetcher>(cfg_, src_);
  }

  // Reads record `i` in 1 MiB reads, as the kernel sends a large read(), and
  // checks every byte; then lets the stream's fetches ahead finish.
  void ReadRecord(ObjectReader& r, uint64_t i) {
    std::vector<std::byte> buf(kMiB);
    for (uint64_t off = i * kRecord; off < (i + 1) * kRecord; off += kMiB) {
      Result<size_t> n = r.Read(off, buf);
      ASSERT_TRUE(n.ok()) << "at " << off << ": " << n.error().ToString();
      ASSERT_EQ(*n, kMiB);
      ASSERT_EQ(std::memcmp(buf.data(), data_->data() + off, kMiB), 0) << "wrong bytes at " << off;
    }
    pf_->WaitIdle();
  }

  // Bytes the source sent more than once over all fetches so far.
  uint64_t BytesFetchedTwice() const {
    auto fetches = src_->fetches();
    std::sort(fetches.begin(), fetches.end(),
              [](const auto& a, const auto& b) { return a.offset < b.offset; });
    uint64_t twice = 0, reached = 0;
    for (const auto& f : fetches) {
      const uint64_t end = f.offset + f.size;
      if (reached > f.offset) twice += std::min(reached, end) - f.offset;
      reached = std::max(reached, end);
    }
    return twice;
  }

  // The fetches in order, in MiB, for a failure's message.
  std::string FetchLog() const {
    std::string log;
    for (const auto& f : src_->fetches()) {
      log += " " + std::to_string(static_cast<double>(f.offset) / kMiB) + "+" +
             std::to_string(static_cast<double>(f.size) / kMiB);
    }
    return log;
  }

  PrefetchConfig cfg_;
  std::shared_ptr<FakeRangeSource> src_;
  std::shared_ptr<const std::vector<std::byte>> data_;
  ObjectVersion obj_;
  std::unique_ptr<Prefetcher> pf_;
};

TEST_F(OutOfOrderTest, RecordsReadOutOfFileOrderAreFetchedOnce) {
  Init(8 * kRecord, 512 * kMiB);
  auto r = pf_->Open(obj_);
  // Forward past records 2 and 3, on to 6 and 7, then back to 2, 3, 4, 5:
  // the order torch.load reads records saved under names that sort apart
  // from their numbers.
  for (uint64_t i : {0, 1, 4, 5, 2, 3, 6, 7}) {
    ReadRecord(*r, i);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(BytesFetchedTwice(), 0u) << FetchLog();
  EXPECT_GT(r->stats().kept_reused, 0u);
  EXPECT_GE(r->stats().seeks, 1u);
}

TEST_F(OutOfOrderTest, AStreamBackOverReadBytesSkipsThem) {
  // Records 4 and 5 are read first; the stream that later starts at record 2
  // reaches them and goes on to 6 without fetching 4 and 5 again.
  Init(8 * kRecord, 512 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t i : {0, 4, 5, 2, 3, 6, 7}) {
    ReadRecord(*r, i);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(BytesFetchedTwice(), 0u) << FetchLog();
}

TEST_F(OutOfOrderTest, KeptPartsGiveWayWhenTheBudgetIsShort) {
  // A budget of a few parts: what the stream left unread cannot all stay,
  // and must not hold back the parts the reads need. Every byte is still
  // right, and closing the reader returns the whole budget.
  Init(8 * kRecord, 24 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t i : {0, 1, 4, 5, 2, 3, 6, 7, 1, 0}) {
    ReadRecord(*r, i);
    if (HasFatalFailure()) return;
  }
  r->Close();
  pf_->WaitIdle();
  EXPECT_EQ(pf_->budget().used(), 0u);
}

TEST_F(OutOfOrderTest, ALoneReadAtTheEndDoesNotLeaveTheStreamBehind) {
  // torch.load of a small checkpoint: the first MiB, then the zip's directory
  // in the last page (within the stream's forward skip), then the records
  // from the start. The records are read by a stream of full parts, not by
  // one GET per read.
  Init(4 * kRecord, 512 * kMiB);
  auto r = pf_->Open(obj_);
  std::vector<std::byte> buf(kMiB);
  ASSERT_TRUE(r->Read(0, buf).ok());
  std::vector<std::byte> tail(8192);
  ASSERT_TRUE(r->Read(data_->size() - tail.size(), tail).ok());
  ASSERT_EQ(std::memcmp(tail.data(), data_->data() + data_->size() - tail.size(), tail.size()), 0);
  for (uint64_t off = kMiB; off < data_->size(); off += kMiB) {
    Result<size_t> n = r->Read(off, buf);
    ASSERT_TRUE(n.ok()) << "at " << off;
    ASSERT_EQ(std::memcmp(buf.data(), data_->data() + off, kMiB), 0) << "wrong bytes at " << off;
  }
  pf_->WaitIdle();
  // At most the last pages again: the lone read fetched them on the side.
  EXPECT_LE(BytesFetchedTwice(), tail.size()) << FetchLog();
  // 64 MiB in parts of up to 8 MiB, after a ramp from 1 MiB: far fewer than
  // the 63 one-MiB GETs of reads served on the side.
  EXPECT_LE(src_->fetch_count(), 16u) << FetchLog();
}

}  // namespace
}  // namespace bucketfs::prefetch
