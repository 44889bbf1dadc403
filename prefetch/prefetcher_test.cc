// Prefetcher: file-level prefetch of small files ahead of their open.
#include "prefetch/prefetcher.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "prefetch/testing/fake_range_source.h"

namespace bucketfs::prefetch {
namespace {

using testing::FakeRangeSource;
using testing::PatternBytes;

class PrefetcherHintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_->SetLatency(std::chrono::microseconds(200));
    for (int i = 0; i < 20; ++i) {
      data_.push_back(PatternBytes(100000 + i, i));
      files_.push_back(src_->Put("bkt", "d/f" + std::to_string(i), data_.back(), "\"e\""));
    }
    cfg_.budget_bytes = 64 << 20;
    pf_ = std::make_unique<Prefetcher>(cfg_, src_);
  }

  bool ReadWholeMatches(ObjectReader& r, const std::vector<std::byte>& want) {
    std::vector<std::byte> buf(want.size() + 10);
    Result<size_t> n = r.Read(0, buf);
    return n.ok() && *n == want.size() && std::memcmp(buf.data(), want.data(), want.size()) == 0;
  }

  // Directory-order reading: each open hints the next four siblings.
  void ReadAllInOrderWithHints() {
    for (size_t i = 0; i < files_.size(); ++i) {
      std::vector<ObjectVersion> next;
      for (size_t j = i + 1; j < files_.size() && j <= i + 4; ++j) next.push_back(files_[j]);
      auto r = pf_->Open(files_[i]);
      pf_->HintNextFiles(next);
      ASSERT_TRUE(ReadWholeMatches(*r, data_[i])) << i;
    }
  }

  std::shared_ptr<FakeRangeSource> src_ = std::make_shared<FakeRangeSource>();
  std::vector<std::vector<std::byte>> data_;
  std::vector<ObjectVersion> files_;
  PrefetchConfig cfg_;
  std::unique_ptr<Prefetcher> pf_;
};

TEST_F(PrefetcherHintTest, HintedFilesAreReadWithoutAnotherFetch) {
  ASSERT_NO_FATAL_FAILURE(ReadAllInOrderWithHints());
  pf_->WaitIdle();
  EXPECT_EQ(src_->fetch_count(), files_.size());  // one whole GET per file, no more
  EXPECT_EQ(pf_->stats().hint_hits, files_.size() - 1);
  EXPECT_EQ(pf_->budget().used(), 0u);  // all readers closed, no hint left
}

TEST_F(PrefetcherHintTest, FilesReadWholeWasteNothing) {
  ASSERT_NO_FATAL_FAILURE(ReadAllInOrderWithHints());
  pf_->WaitIdle();
  EXPECT_EQ(pf_->stats().wasted_bytes, 0u);
}

TEST_F(PrefetcherHintTest, ReadAheadDroppedUnreadCountsAsWaste) {
  auto big = src_->Put("bkt", "d/big", PatternBytes(64 << 20, 7), "\"b\"");
  {
    auto r = pf_->Open(big);
    std::vector<std::byte> buf(1 << 20);
    // Sequential reads grow the window, then the reader goes away.
    for (uint64_t off = 0; off < (8u << 20); off += buf.size()) {
      ASSERT_TRUE(r->Read(off, buf).ok());
    }
    pf_->WaitIdle();
  }
  pf_->WaitIdle();
  const PrefetcherStats s = pf_->stats();
  EXPECT_GT(s.bytes_fetched, 8u << 20);
  // What was fetched beyond the 8 MiB read, in parts no read touched.
  EXPECT_GT(s.wasted_bytes, 0u);
  EXPECT_LE(s.wasted_bytes, s.bytes_fetched - (8u << 20));
}

TEST_F(PrefetcherHintTest, HintsSkipLargeAndRepeatedFilesAndRespectTheShare) {
  auto big = src_->Put("bkt", "d/big", PatternBytes(8 << 20, 1), "\"b\"");
  pf_->HintNextFiles({big, files_[0], files_[0]});
  pf_->HintNextFiles({files_[0]});
  pf_->WaitIdle();
  EXPECT_EQ(src_->fetch_count(), 1u);
  // A share of 1/8 of 1 MiB fits one 100 KB file only.
  PrefetchConfig small = cfg_;
  small.budget_bytes = 1 << 20;
  Prefetcher p2(small, src_);
  p2.HintNextFiles({files_[1], files_[2], files_[3]});
  p2.WaitIdle();
  EXPECT_EQ(p2.stats().hinted, 1u);
}

TEST_F(PrefetcherHintTest, ChangedVersionIsNotAdopted) {
  pf_->HintNextFiles({files_[3]});
  pf_->WaitIdle();
  ObjectVersion changed = src_->Put("bkt", "d/f3", PatternBytes(100003, 77), "\"e2\"");
  auto r = pf_->Open(changed);
  ASSERT_TRUE(ReadWholeMatches(*r, PatternBytes(100003, 77)));
  EXPECT_EQ(pf_->stats().hint_hits, 0u);
  EXPECT_EQ(src_->fetch_count(), 2u);
}

TEST_F(PrefetcherHintTest, FailedHintIsFetchedAgainOnOpen) {
  int calls = 0;
  src_->SetFailure([&calls](const ObjectVersion&, uint64_t, uint64_t) -> std::optional<Error> {
    if (calls++ == 0) return MakeError(EIO, "InternalError", "injected");
    return std::nullopt;
  });
  pf_->HintNextFiles({files_[5]});
  pf_->WaitIdle();
  auto r = pf_->Open(files_[5]);
  ASSERT_TRUE(ReadWholeMatches(*r, data_[5]));
  EXPECT_EQ(src_->fetch_count(), 2u);
}

TEST_F(PrefetcherHintTest, OpenWhileTheHintIsInFlightWaitsForIt) {
  src_->SetPaused(true);
  pf_->HintNextFiles({files_[7]});
  auto r = pf_->Open(files_[7]);
  std::promise<bool> done;
  r->ReadFromParts(0, 1 << 20, [&](Result<ReadData> d) {
    std::vector<std::byte> got(d.ok() ? d->size() : 0);
    if (d.ok()) d->CopyTo(got);
    done.set_value(d.ok() && got == data_[7]);
  });
  src_->SetPaused(false);
  EXPECT_TRUE(done.get_future().get());
  EXPECT_EQ(src_->fetch_count(), 1u);
  EXPECT_EQ(pf_->stats().hint_hits, 1u);
}

}  // namespace
}  // namespace bucketfs::prefetch
