#include "prefetch/caching_range_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "prefetch/prefetcher.h"
#include "prefetch/testing/fake_range_source.h"

namespace bucketfs::prefetch {
namespace {

using testing::FakeRangeSource;
using testing::PatternBytes;

class CachingRangeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/caching-source-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    cache::DataCacheOptions o;
    o.dir = root_ + "/data";
    o.max_bytes = 64 << 20;
    o.block_size = 64 << 10;
    auto c = cache::DataCache::Open(o);
    ASSERT_TRUE(c.ok());
    cache_ = *c;
    fake_ = std::make_shared<FakeRangeSource>();
    source_ = std::make_shared<CachingRangeSource>(fake_, cache_, 2);
  }
  void TearDown() override {
    source_.reset();
    std::filesystem::remove_all(root_);
  }

  Status Fetch(const ObjectVersion& v, uint64_t offset, std::span<std::byte> dest) {
    std::promise<Status> p;
    source_->FetchAsync(v, offset, dest, [&p](Status s) { p.set_value(std::move(s)); });
    Status s = p.get_future().get();
    source_->WaitForFills();  // the reader has its bytes before the cache does
    return s;
  }

  std::string root_;
  std::shared_ptr<cache::DataCache> cache_;
  std::shared_ptr<FakeRangeSource> fake_;
  std::shared_ptr<CachingRangeSource> source_;
};

TEST_F(CachingRangeSourceTest, TheSecondFetchOfARangeComesFromTheCache) {
  const auto data = PatternBytes(1 << 20, 1);
  const ObjectVersion v = fake_->Put("b", "k", data, "\"e1\"");
  std::vector<std::byte> out(256 << 10);
  ASSERT_TRUE(Fetch(v, 128 << 10, out).ok());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + (128 << 10)));
  EXPECT_EQ(fake_->fetch_count(), 1u);
  std::fill(out.begin(), out.end(), std::byte{0});
  ASSERT_TRUE(Fetch(v, 128 << 10, out).ok());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + (128 << 10)));
  EXPECT_EQ(fake_->fetch_count(), 1u);  // no second GET
  // A read inside the cached blocks, at another offset and size, also hits.
  std::vector<std::byte> small(1000);
  ASSERT_TRUE(Fetch(v, (128 << 10) + 77, small).ok());
  EXPECT_TRUE(std::equal(small.begin(), small.end(), data.begin() + (128 << 10) + 77));
  EXPECT_EQ(fake_->fetch_count(), 1u);
  // Bytes never fetched are fetched.
  ASSERT_TRUE(Fetch(v, 0, small).ok());
  EXPECT_EQ(fake_->fetch_count(), 2u);
}

// The copy waiting for its cache write is charged to the read budget while
// it waits, and nothing stays charged once the fills are done.
TEST_F(CachingRangeSourceTest, FillCopiesAreChargedToTheBudgetUntilWritten) {
  auto budget = std::make_shared<memory::MemoryBudget>(64 << 20);
  source_ = std::make_shared<CachingRangeSource>(fake_, cache_, 2, 1 << 20, budget);
  const auto data = PatternBytes(1 << 20, 3);
  const ObjectVersion v = fake_->Put("b", "k", data, "\"e1\"");
  std::vector<std::byte> out(1 << 20);
  ASSERT_TRUE(Fetch(v, 0, out).ok());
  EXPECT_GE(budget->peak(), 1u << 20);
  EXPECT_EQ(budget->used(), 0u);
  auto file = cache_->Acquire(v, /*create=*/false);
  ASSERT_NE(file, nullptr);
  std::vector<std::byte> cached(1 << 20);
  EXPECT_TRUE(file->Read(0, cached));
}

// With no room in the budget for a copy, the reader's range is in the cache
// before the reader gets it.
TEST_F(CachingRangeSourceTest, WithoutRoomForACopyTheFillPrecedesTheReply) {
  auto budget = std::make_shared<memory::MemoryBudget>(1);
  source_ = std::make_shared<CachingRangeSource>(fake_, cache_, 2, 1 << 20, budget);
  const auto data = PatternBytes(256 << 10, 4);
  const ObjectVersion v = fake_->Put("b", "k", data, "\"e1\"");
  std::vector<std::byte> out(256 << 10);
  std::promise<bool> cached_at_reply;
  source_->FetchAsync(v, 0, out, [&](Status s) {
    auto file = cache_->Acquire(v, /*create=*/false);
    std::vector<std::byte> cached(256 << 10);
    cached_at_reply.set_value(s.ok() && file != nullptr && file->Read(0, cached));
  });
  EXPECT_TRUE(cached_at_reply.get_future().get());
  source_->WaitForFills();
  EXPECT_EQ(budget->peak(), 0u);
  EXPECT_EQ(budget->used(), 0u);
}

// Best effort: with no room for a copy the reader gets its range at once,
// unwritten; a later read fetches it again and fills it when there is room.
TEST_F(CachingRangeSourceTest, BestEffortLeavesOutWhatItCannotCopy) {
  auto budget = std::make_shared<memory::MemoryBudget>(1);
  source_ = std::make_shared<CachingRangeSource>(fake_, cache_, 2, 1 << 20, budget,
                                                 CachingRangeSource::FillMode::kBestEffort);
  const auto data = PatternBytes(256 << 10, 5);
  const ObjectVersion v = fake_->Put("b", "k", data, "\"e1\"");
  std::vector<std::byte> out(256 << 10);
  ASSERT_TRUE(Fetch(v, 0, out).ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(cache_->TotalBytes(), 0u);
  EXPECT_EQ(cache_->stats().skipped_fill_bytes, data.size());
  source_ = std::make_shared<CachingRangeSource>(fake_, cache_, 2, 1 << 20, nullptr,
                                                 CachingRangeSource::FillMode::kBestEffort);
  std::fill(out.begin(), out.end(), std::byte{0});
  ASSERT_TRUE(Fetch(v, 0, out).ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(fake_->fetch_count(), 2u);
  EXPECT_EQ(cache_->TotalBytes(), data.size());
  EXPECT_EQ(cache_->stats().skipped_fill_bytes, data.size());
}

TEST_F(CachingRangeSourceTest, AFailedFetchFillsNothing) {
  const auto data = PatternBytes(256 << 10, 2);
  const ObjectVersion v = fake_->Put("b", "k", data, "\"e1\"");
  fake_->SetFailure([](const ObjectVersion&, uint64_t, uint64_t) -> std::optional<Error> {
    return MakeError(EIO, "InternalError", "injected");
  });
  std::vector<std::byte> out(data.size());
  EXPECT_FALSE(Fetch(v, 0, out).ok());
  EXPECT_EQ(cache_->TotalBytes(), 0u);
  fake_->SetFailure(nullptr);
  ASSERT_TRUE(Fetch(v, 0, out).ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(cache_->TotalBytes(), data.size());
}

TEST_F(CachingRangeSourceTest, ACorruptedCacheFileIsFetchedAgainNotServed) {
  const auto data = PatternBytes(256 << 10, 3);
  const ObjectVersion v = fake_->Put("b", "k", data, "\"e1\"");
  std::vector<std::byte> out(data.size());
  ASSERT_TRUE(Fetch(v, 0, out).ok());
  auto f = cache_->Acquire(v, false);
  ASSERT_NE(f, nullptr);
  const int fd = ::open(f->path().c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::vector<char> junk(100, 'X');
  ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), 70000), 100);
  ::close(fd);
  f.reset();
  std::fill(out.begin(), out.end(), std::byte{0});
  ASSERT_TRUE(Fetch(v, 0, out).ok());
  EXPECT_EQ(out, data);  // the right bytes, from the store
  EXPECT_EQ(fake_->fetch_count(), 2u);
  EXPECT_EQ(cache_->stats().bad_blocks, 1u);
  ASSERT_TRUE(Fetch(v, 0, out).ok());  // refilled: a hit again
  EXPECT_EQ(out, data);
  EXPECT_EQ(fake_->fetch_count(), 2u);
}

TEST_F(CachingRangeSourceTest, APrefetcherReadingTwiceFetchesOnce) {
  const auto data = PatternBytes(5 << 20, 4);
  const ObjectVersion v = fake_->Put("b", "big", data, "\"e1\"");
  PrefetchConfig cfg;
  Prefetcher prefetcher(cfg, source_);
  for (int epoch = 0; epoch < 2; ++epoch) {
    auto reader = prefetcher.Open(v);
    std::vector<std::byte> out(data.size());
    uint64_t got = 0;
    while (got < data.size()) {
      auto n = reader->Read(
          got, std::span(out).subspan(got, std::min<uint64_t>(128 << 10, data.size() - got)));
      ASSERT_TRUE(n.ok());
      ASSERT_GT(*n, 0u);
      got += *n;
    }
    EXPECT_EQ(out, data) << epoch;
    reader->Close();
    prefetcher.WaitIdle();
    source_->WaitForFills();  // the cache writes trail the reader
    if (epoch == 0) fake_->ClearLog();
  }
  EXPECT_EQ(fake_->fetch_count(), 0u);  // epoch 2 from the cache only
  EXPECT_TRUE(cache_->Acquire(v, false)->VerifiedComplete());
}

}  // namespace
}  // namespace bucketfs::prefetch
