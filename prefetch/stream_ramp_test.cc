// How fast a sequential stream reaches full depth and how it stays there,
// over a paused FakeRangeSource: the test decides when (and in which order)
// each ranged GET ends, as a store with a long time-to-first-byte would.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <vector>

#include "prefetch/object_reader.h"
#include "prefetch/prefetcher.h"
#include "prefetch/testing/fake_range_source.h"

namespace bucketfs::prefetch {
namespace {

using testing::FakeRangeSource;
constexpr uint64_t kMiB = 1024 * 1024;

class StreamRampTest : public ::testing::Test {
 protected:
  void Init(uint64_t size) {
    cfg_.budget_bytes = 512 * kMiB;
    obj_ = src_->Put("bkt", "big.bin", testing::SharedPattern(size, 3), "\"v1\"");
    pf_ = std::make_unique<Prefetcher>(cfg_, src_);
    src_->SetPaused(true);
    reader_ = pf_->Open(obj_);
  }

  void TearDown() override {
    src_->SetPaused(false);
    for (auto& f : answers_) EXPECT_TRUE(f.get().ok());
  }

  // Starts a read that is answered once its parts arrive.
  void StartRead(uint64_t offset, uint64_t size) {
    auto answer = std::make_shared<std::promise<Result<ReadData>>>();
    answers_.push_back(answer->get_future());
    reader_->ReadFromParts(offset, size,
                           [answer](Result<ReadData> d) { answer->set_value(std::move(d)); });
  }

  PrefetchConfig cfg_;
  std::shared_ptr<FakeRangeSource> src_ = std::make_shared<FakeRangeSource>();
  ObjectVersion obj_;
  std::unique_ptr<Prefetcher> pf_;
  std::shared_ptr<ObjectReader> reader_;
  std::vector<std::future<Result<ReadData>>> answers_;
};

TEST_F(StreamRampTest, ReadsThatWaitReachFullDepthWithinOneRoundTrip) {
  Init(256 * kMiB);
  // The kernel's first readahead: a few 1 MiB READs at once, all waiting.
  for (uint64_t i = 0; i < 4; ++i) StartRead(i * kMiB, kMiB);
  ASSERT_FALSE(src_->fetches().empty());
  EXPECT_EQ(src_->fetches()[0].size, cfg_.initial_window);  // first bytes in one round trip
  EXPECT_GT(src_->in_flight(), 2);                          // several parts at once
  // The first part arrives; the reader reads on and waits again.
  ASSERT_TRUE(src_->CompleteOldestPaused());
  for (uint64_t i = 4; i < 8; ++i) StartRead(i * kMiB, kMiB);
  EXPECT_EQ(src_->in_flight(), cfg_.max_parts_in_flight);
  EXPECT_EQ(reader_->stats().forced_bytes, 0u);
}

TEST_F(StreamRampTest, APartThatArrivesEarlyFreesItsSlotAtOnce) {
  cfg_.max_parts_in_flight = 4;
  Init(256 * kMiB);
  // Full depth: reads wait, parts arrive in order.
  for (uint64_t off = 0; off < 32 * kMiB; off += kMiB) {
    StartRead(off, kMiB);
    while (answers_.back().wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ASSERT_TRUE(src_->CompleteOldestPaused());
    }
    ASSERT_TRUE(answers_.back().get().ok());  // and drops the parts it pinned
    answers_.pop_back();
  }
  ASSERT_EQ(src_->paused_count(), 4u);
  const uint64_t fetches = src_->fetch_count();
  const uint64_t oldest = src_->fetches()[fetches - 4].offset;
  // The reader waits for the oldest part while newer ones arrive first: each
  // arrival starts the next part at once, not once the reader gets there.
  StartRead(oldest, kMiB);
  for (uint64_t i = 1; i <= 2; ++i) {
    ASSERT_TRUE(src_->CompleteNewestPaused());
    EXPECT_EQ(src_->fetch_count(), fetches + i);
    EXPECT_EQ(src_->paused_count(), 4u);
  }
  EXPECT_LE(src_->max_in_flight(), 4);
  // Within the window and a quarter of it ahead of the reader, not more.
  EXPECT_LE(pf_->budget().used(), 32 * kMiB + 8 * kMiB + 2 * cfg_.part_size);
}

}  // namespace
}  // namespace bucketfs::prefetch
