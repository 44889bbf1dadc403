// ObjectReader behaviour over the in-process FakeRangeSource: exact bytes,
// window growth, no duplicate fetches, random reads at the floor or their
// pages, seek and re-detection, concurrent out-of-order readers, the memory
// budget, close, failures and changed objects.
#include "prefetch/object_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "prefetch/prefetcher.h"
#include "prefetch/random_locality.h"
#include "prefetch/testing/fake_range_source.h"

namespace bucketfs::prefetch {
namespace {

using testing::FakeRangeSource;
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;

class ObjectReaderTest : public ::testing::Test {
 protected:
  void Init(uint64_t size, uint64_t budget = 512 * kMiB) {
    src_ = std::make_shared<FakeRangeSource>();
    src_->SetLatency(std::chrono::microseconds(300));
    shared_ = testing::SharedPattern(size, 7);
    obj_ = src_->Put("bkt", "big.bin", shared_, "\"v1\"");
    cfg_.budget_bytes = budget;
    pf_ = std::make_unique<Prefetcher>(cfg_, src_);
  }

  // A test that failed with the source paused would otherwise hang in the
  // Prefetcher's destructor, which waits for the fetches it holds.
  void TearDown() override {
    if (src_) src_->SetPaused(false);
  }

  // Reads [off, off+len) and checks the bytes against the object; returns errno or 0.
  // The offset of a random 4 KiB row of data(), not the first and not the
  // last `spare` (rows read at random, as from an HDF5 file).
  uint64_t RandomRow(std::mt19937_64& rng, uint64_t spare) {
    return (1 + rng() % (data().size() / (4 * kKiB) - 1 - spare)) * 4 * kKiB;
  }

  int ReadAndCheck(ObjectReader& r, uint64_t off, uint64_t len) {
    std::vector<std::byte> buf(len);
    Result<size_t> n = r.Read(off, buf);
    if (!n.ok()) return n.error().errno_value;
    const uint64_t want = off >= data().size() ? 0 : std::min<uint64_t>(len, data().size() - off);
    EXPECT_EQ(*n, want) << "at " << off;
    if (*n != want) return -1;
    if (want > 0 && std::memcmp(buf.data(), data().data() + off, want) != 0) {
      ADD_FAILURE() << "wrong bytes at " << off;
      return -1;
    }
    return 0;
  }

  // Reads [off, off+len) from a paused source as a reader faster than its
  // store: while the read is unanswered, completes the oldest fetch still
  // held, one at a time. A read whose bytes are in flight so always waits
  // for them, however fast or slow the machine runs the reader. Checks the
  // bytes; returns errno or 0.
  // REQUIRES: src_->SetPaused(true)
  int ReadWaitingForStore(ObjectReader& r, uint64_t off, uint64_t len) {
    auto answer = std::make_shared<std::promise<Result<ReadData>>>();
    auto got = answer->get_future();
    r.ReadFromParts(off, len, [answer](Result<ReadData> d) { answer->set_value(std::move(d)); });
    while (got.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      if (!src_->CompleteOldestPaused()) {
        ADD_FAILURE() << "the read at " << off << " waits for no fetch";
        return -1;
      }
    }
    Result<ReadData> d = got.get();
    if (!d.ok()) return d.error().errno_value;
    const uint64_t want = off >= data().size() ? 0 : std::min<uint64_t>(len, data().size() - off);
    std::vector<std::byte> buf(len);
    const size_t n = d->CopyTo(buf);
    EXPECT_EQ(n, want) << "at " << off;
    if (n != want) return -1;
    if (want > 0 && std::memcmp(buf.data(), data().data() + off, want) != 0) {
      ADD_FAILURE() << "wrong bytes at " << off;
      return -1;
    }
    return 0;
  }

  // Fetches must not overlap: no range is ever fetched twice.
  static uint64_t OverlapBytes(std::vector<FakeRangeSource::Fetch> f) {
    std::sort(f.begin(), f.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    uint64_t overlap = 0, end = 0;
    for (const auto& x : f) {
      if (x.offset < end) overlap += std::min(end, x.offset + x.size) - x.offset;
      end = std::max(end, x.offset + x.size);
    }
    return overlap;
  }

  PrefetchConfig cfg_;
  std::shared_ptr<FakeRangeSource> src_;
  std::shared_ptr<const std::vector<std::byte>> shared_;
  const std::vector<std::byte>& data() const { return *shared_; }
  ObjectVersion obj_;
  std::unique_ptr<Prefetcher> pf_;
};

TEST_F(ObjectReaderTest, SequentialReadIsExactAndTheWindowGrows) {
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < data().size(); off += 128 * kKiB) {
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  }
  pf_->WaitIdle();
  const auto fetches = src_->fetches();
  ASSERT_FALSE(fetches.empty());
  EXPECT_EQ(fetches[0].offset, 0u);
  EXPECT_EQ(fetches[0].size, cfg_.initial_window);  // small first request
  uint64_t max_size = 0, total = 0;
  for (const auto& f : fetches) {
    max_size = std::max(max_size, f.size);
    total += f.size;
  }
  EXPECT_EQ(max_size, cfg_.part_size);  // grew to full parts
  EXPECT_EQ(total, data().size());      // every byte fetched exactly once
  EXPECT_EQ(OverlapBytes(fetches), 0u);
  EXPECT_LE(fetches.size(), data().size() / cfg_.part_size + 8);  // ~ size / part_size
  EXPECT_GE(r->stats().window, 2 * cfg_.part_size);  // grew while the first reads waited
  EXPECT_GT(src_->max_in_flight(), 1);               // parts really overlapped
  EXPECT_EQ(r->stats().forced_bytes, 0u);
  std::printf("sequential 100 MiB: %zu fetches, %llu of %llu reads waited\n", fetches.size(),
              static_cast<unsigned long long>(r->stats().waited_reads),
              static_cast<unsigned long long>(r->stats().reads));
}

TEST_F(ObjectReaderTest, AsyncReadAcrossPartsIsZeroCopySegments) {
  Init(32 * kMiB);
  auto r = pf_->Open(obj_);
  ASSERT_EQ(ReadAndCheck(*r, 0, 64 * kKiB), 0);
  // [1 MiB - 4 KiB, 1 MiB + 4 KiB) straddles the first two parts.
  std::promise<Result<ReadData>> p;
  r->ReadFromParts(kMiB - 4 * kKiB, 8 * kKiB,
                   [&p](Result<ReadData> d) { p.set_value(std::move(d)); });
  Result<ReadData> d = p.get_future().get();
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->segments().size(), 2u);
  EXPECT_EQ(d->size(), 8 * kKiB);
  EXPECT_EQ(std::memcmp(d->segments()[0].data(), data().data() + kMiB - 4 * kKiB, 4 * kKiB), 0);
  EXPECT_EQ(std::memcmp(d->segments()[1].data(), data().data() + kMiB, 4 * kKiB), 0);
}

TEST_F(ObjectReaderTest, EndOfObjectReadsAreShortOrEmpty) {
  Init(5 * kMiB + 123);
  auto r = pf_->Open(obj_);
  EXPECT_EQ(ReadAndCheck(*r, 0, 128 * kKiB), 0);
  EXPECT_EQ(ReadAndCheck(*r, data().size() - 100, 128 * kKiB), 0);  // short
  EXPECT_EQ(ReadAndCheck(*r, data().size(), 4096), 0);              // empty
  EXPECT_EQ(ReadAndCheck(*r, data().size() + 5000, 4096), 0);       // empty
}

TEST_F(ObjectReaderTest, RandomReadsFetchTheFloorThenOnlyTheirPages) {
  // 4 KiB reads spread over the object (fio's rand4k): the first ones fetch
  // the floor; once no read comes near a recent one, each fetches its own
  // page (RandomLocality), never more than the floor. (Not held whole: that
  // has its own tests below.)
  cfg_.random_whole_max = 0;
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  std::mt19937_64 rng(42);
  const int kReads = 300;
  for (int i = 0; i < kReads; ++i) {
    const uint64_t off = (1 + rng() % (data().size() / (4 * kKiB) - 1)) * 4 * kKiB;
    ASSERT_EQ(ReadAndCheck(*r, off, 4 * kKiB), 0);
  }
  pf_->WaitIdle();
  const auto fetches = src_->fetches();
  EXPECT_LE(fetches.size(), static_cast<size_t>(kReads));
  const int warm = RandomLocality::kWindow;
  for (size_t i = 0; i < fetches.size(); ++i) {
    EXPECT_EQ(fetches[i].size, i < static_cast<size_t>(warm) ? cfg_.random_floor : 4 * kKiB)
        << "fetch " << i << " at " << fetches[i].offset;
  }
  EXPECT_LE(src_->bytes_fetched(), warm * cfg_.random_floor + (kReads - warm) * 4 * kKiB);
  EXPECT_EQ(r->stats().stream_starts, 0u);
  EXPECT_FALSE(r->stats().sequential);
}

TEST_F(ObjectReaderTest, OnlyRandomBlocksAreFetchedForTheCallerAndOnlyWhenAllowed) {
  // Off by default: every fetch goes through FetchAsync. (Random reads keep
  // fetching blocks: the object is not held whole.)
  cfg_.random_whole_max = 0;
  Init(100 * kMiB);
  {
    auto r = pf_->Open(obj_);
    ASSERT_EQ(ReadAndCheck(*r, 50 * kMiB, 4 * kKiB), 0);
    ASSERT_EQ(ReadAndCheck(*r, 20 * kMiB, 4 * kKiB), 0);
    pf_->WaitIdle();
    for (const auto& f : src_->fetches()) EXPECT_FALSE(f.for_caller) << "at " << f.offset;
  }
  cfg_.max_fetches_on_caller = 4;
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  // A stream from offset 0: its parts are read ahead, nobody waits on them
  // on the calling thread.
  for (uint64_t off = 0; off < 4 * kMiB; off += 128 * kKiB) {
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  }
  pf_->WaitIdle();
  const size_t stream_fetches = src_->fetch_count();
  ASSERT_GT(stream_fetches, 0u);
  for (const auto& f : src_->fetches()) EXPECT_FALSE(f.for_caller) << "at " << f.offset;
  // Random reads far from the stream (past its forward skip, then a seek)
  // and from each other: one block each, each for the caller.
  ASSERT_EQ(ReadAndCheck(*r, 96 * kMiB, 4 * kKiB), 0);
  ASSERT_EQ(ReadAndCheck(*r, 88 * kMiB, 4 * kKiB), 0);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) {
    const uint64_t off = (8 * kMiB) + (rng() % (80 * kMiB / (4 * kKiB))) * 4 * kKiB;
    ASSERT_EQ(ReadAndCheck(*r, off, 4 * kKiB), 0);
  }
  pf_->WaitIdle();
  const auto fetches = src_->fetches();
  ASSERT_GT(fetches.size(), stream_fetches);
  for (size_t i = stream_fetches; i < fetches.size(); ++i) {
    EXPECT_TRUE(fetches[i].for_caller) << "fetch " << i << " at " << fetches[i].offset;
  }
  EXPECT_EQ(r->stats().forced_bytes, 0u);
}

TEST_F(ObjectReaderTest, FetchesForTheCallerAreCappedAcrossReaders) {
  cfg_.max_fetches_on_caller = 1;
  Init(100 * kMiB);
  auto a = pf_->Open(obj_);
  auto b = pf_->Open(obj_);
  // Two random blocks at once (the source held): the first may run on its
  // caller, the second is over the cap and goes through FetchAsync.
  src_->SetPaused(true);
  std::promise<Result<ReadData>> pa, pb;
  a->ReadFromParts(60 * kMiB, 4 * kKiB, [&pa](Result<ReadData> d) { pa.set_value(std::move(d)); });
  b->ReadFromParts(30 * kMiB, 4 * kKiB, [&pb](Result<ReadData> d) { pb.set_value(std::move(d)); });
  auto fetches = src_->fetches();
  ASSERT_EQ(fetches.size(), 2u);
  EXPECT_TRUE(fetches[0].for_caller);
  EXPECT_FALSE(fetches[1].for_caller);
  src_->SetPaused(false);
  ASSERT_TRUE(pa.get_future().get().ok());
  ASSERT_TRUE(pb.get_future().get().ok());
  pf_->WaitIdle();
  // Both finished: the slot is free again.
  ASSERT_EQ(ReadAndCheck(*a, 10 * kMiB, 4 * kKiB), 0);
  fetches = src_->fetches();
  ASSERT_EQ(fetches.size(), 3u);
  EXPECT_TRUE(fetches[2].for_caller);
}

TEST_F(ObjectReaderTest, RandomReadsHitTheBlockCache) {
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  const uint64_t block = 40 * kMiB;  // aligned to the 64 KiB floor
  ASSERT_EQ(ReadAndCheck(*r, block + 32 * kKiB, 4 * kKiB), 0);
  ASSERT_EQ(ReadAndCheck(*r, block + 8 * kKiB, 4 * kKiB), 0);  // backwards, same block
  ASSERT_EQ(ReadAndCheck(*r, block, 4 * kKiB), 0);
  EXPECT_EQ(src_->fetch_count(), 1u);
  // Large random reads are fetched as they are, not rounded up further.
  ASSERT_EQ(ReadAndCheck(*r, 70 * kMiB + 4 * kKiB, kMiB), 0);
  ASSERT_EQ(src_->fetch_count(), 2u);
  EXPECT_EQ(src_->fetches()[1].size, kMiB);
}

TEST_F(ObjectReaderTest, SeekThenSequentialRunIsRedetected) {
  Init(160 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < 4 * kMiB; off += 128 * kKiB)
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  EXPECT_TRUE(r->stats().sequential);
  pf_->WaitIdle();
  src_->ClearLog();

  // Further than max_forward_skip past anything the stream scheduled: a seek.
  const uint64_t base = 100 * kMiB + 4 * kKiB;
  ASSERT_EQ(ReadAndCheck(*r, base, 128 * kKiB), 0);
  ASSERT_EQ(src_->fetch_count(), 1u);
  EXPECT_EQ(src_->fetches()[0].size, 128 * kKiB);  // request-sized, not a window

  // A slow store from here: the restarted stream's reads wait, so its window
  // grows again (it only grows while reads wait).
  src_->SetLatency(std::chrono::milliseconds(5));
  for (uint64_t off = base + 128 * kKiB; off < base + 24 * kMiB; off += 128 * kKiB) {
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  }
  EXPECT_TRUE(r->stats().sequential);
  EXPECT_EQ(r->stats().seeks, 1u);
  EXPECT_EQ(r->stats().stream_starts, 2u);
  pf_->WaitIdle();
  const auto f = src_->fetches();
  ASSERT_GE(f.size(), 3u);
  EXPECT_EQ(f[1].offset, base + 128 * kKiB);  // the second sequential request restarts
  // with the window of the run before the seek (4 MiB, less than it reached).
  EXPECT_EQ(f[1].size, 4 * kMiB);
  uint64_t max_size = 0;
  for (const auto& x : f) max_size = std::max(max_size, x.size);
  EXPECT_EQ(max_size, cfg_.part_size);
  EXPECT_EQ(OverlapBytes(f), 0u);
}

TEST_F(ObjectReaderTest, ConcurrentOutOfOrderReadersGetExactBytes) {
  // Like the kernel's readahead: 128 KiB requests handed out in order to
  // several threads, which complete them concurrently and out of order.
  Init(64 * kMiB);
  auto r = pf_->Open(obj_);
  const uint64_t kChunk = 128 * kKiB;
  std::atomic<uint64_t> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (uint64_t c = next++; c * kChunk < data().size(); c = next++) {
        if (ReadAndCheck(*r, c * kChunk, kChunk) != 0) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  pf_->WaitIdle();
  // Stragglers may cost a few side fetches, never a re-read of the file.
  EXPECT_LE(src_->bytes_fetched(), data().size() + 4 * kMiB);
  EXPECT_TRUE(r->stats().sequential);
  EXPECT_EQ(r->stats().seeks, 0u);
}

TEST_F(ObjectReaderTest, FreeRunningInterleavedThreadsGetExactBytes) {
  // Thread t reads chunks t, t+4, t+8, ... at its own pace: the threads may
  // drift far apart. Every byte must still be right.
  Init(64 * kMiB);
  auto r = pf_->Open(obj_);
  const int kThreads = 4;
  const uint64_t kChunk = 128 * kKiB;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t c = t; c * kChunk < data().size(); c += kThreads) {
        if (ReadAndCheck(*r, c * kChunk, kChunk) != 0) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ObjectReaderTest, WindowGrowsOnlyWhileReadsWait) {
  cfg_.max_window = 32 * kMiB;
  // A store slower than the reader: fetches end only when a read waits for
  // them (ReadWaitingForStore). The reader keeps catching up with the window,
  // which grows past two parts to its cap. (With a 300 ms fetch latency
  // instead, a TSan reader on a loaded machine was descheduled long enough
  // to never wait, and its window stayed at two parts.)
  Init(96 * kMiB);
  src_->SetPaused(true);
  auto fast = pf_->Open(obj_);
  for (uint64_t off = 0; off < data().size(); off += kMiB) {
    ASSERT_EQ(ReadWaitingForStore(*fast, off, kMiB), 0);
  }
  EXPECT_EQ(fast->stats().window, 32 * kMiB);
  EXPECT_GT(fast->stats().waited_reads, 0u);
  fast->Close();
  src_->SetPaused(false);  // what the window fetched past the last read ends now
  pf_->WaitIdle();
  // A reader slower than the store never waits once started (fetches now
  // complete inside FetchAsync, before the next read): its window stays at
  // two parts, and so does the memory it holds.
  src_->SetLatency(std::chrono::microseconds(0));
  auto slow = pf_->Open(obj_);
  uint64_t most_used = 0;
  for (uint64_t off = 0; off < 48 * kMiB; off += kMiB) {
    ASSERT_EQ(ReadAndCheck(*slow, off, kMiB), 0);
    most_used = std::max(most_used, pf_->budget().used());
  }
  EXPECT_LE(slow->stats().window, 16 * kMiB);
  EXPECT_LE(most_used, 32 * kMiB);
}

TEST_F(ObjectReaderTest, WindowGrowsWithoutWaitsWhenConfiguredSo) {
  // A reader slower than the store never waits (fetches complete inside
  // FetchAsync); with grow_only_when_reads_wait off (direct-I/O mounts) its
  // window still doubles every half window read, up to the cap.
  cfg_.max_window = 64 * kMiB;
  cfg_.grow_only_when_reads_wait = false;
  Init(96 * kMiB);
  src_->SetLatency(std::chrono::microseconds(0));
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < 64 * kMiB; off += kMiB) {
    ASSERT_EQ(ReadAndCheck(*r, off, kMiB), 0);
  }
  EXPECT_LE(r->stats().waited_reads, 1u);  // the first read, planned before its fetch
  EXPECT_EQ(r->stats().window, 64 * kMiB);
}

TEST_F(ObjectReaderTest, WindowStopsAtWhatItsFetchesInFlightCover) {
  // Every read waits (a slow store), so waiting alone would double the window
  // up to max_window; past max_parts_in_flight parts it could only hold parts
  // already fetched, so it stops there, and so does the memory it holds.
  cfg_.max_window = 256 * kMiB;
  cfg_.max_parts_in_flight = 4;
  Init(160 * kMiB);
  // Fetches end only when a read waits for them (ReadWaitingForStore), so
  // the reader outruns the store whatever the machine's speed (with a fixed
  // latency instead, ASan and TSan readers kept up and the window stayed at
  // two parts: growth needs reads that wait).
  src_->SetPaused(true);
  auto r = pf_->Open(obj_);
  uint64_t most_used = 0;
  for (uint64_t off = 0; off < data().size(); off += kMiB) {
    ASSERT_EQ(ReadWaitingForStore(*r, off, kMiB), 0);
    most_used = std::max(most_used, pf_->budget().used());
  }
  src_->SetPaused(false);
  EXPECT_EQ(r->stats().window, 4 * cfg_.part_size);  // grew to the cap, not past it
  EXPECT_GT(r->stats().waited_reads, 0u);
  EXPECT_LE(src_->max_in_flight(), 4);
  EXPECT_LE(most_used, 6 * cfg_.part_size);  // the window and the part being read
  EXPECT_EQ(src_->bytes_fetched(), data().size());
}

TEST_F(ObjectReaderTest, EachStreamGetsItsShareOfTheWindow) {
  cfg_.max_window = 64 * kMiB;
  Init(128 * kMiB);
  src_->SetLatency(std::chrono::milliseconds(5));
  std::vector<std::shared_ptr<ObjectReader>> readers;
  for (int i = 0; i < 4; ++i) readers.push_back(pf_->Open(obj_));
  for (auto& r : readers) ASSERT_EQ(ReadAndCheck(*r, 0, kMiB), 0);  // 4 streams
  for (uint64_t off = kMiB; off < data().size(); off += kMiB) {
    for (auto& r : readers) ASSERT_EQ(ReadAndCheck(*r, off, kMiB), 0);
  }
  for (auto& r : readers) EXPECT_LE(r->stats().window, 16 * kMiB);  // 64 MiB / 4
  for (auto& r : readers) EXPECT_GE(r->stats().window, 8 * kMiB);
}

TEST_F(ObjectReaderTest, PartsAreReleasedOnceEveryPageWasRead) {
  // Reads page aligned but out of order within each part, like the kernel's
  // readahead: a part goes as soon as all of it was read, long before it is
  // backward_tolerance (64 MiB) behind.
  Init(96 * kMiB);
  auto r = pf_->Open(obj_);
  const uint64_t kChunk = 256 * kKiB;
  uint64_t most_used = 0;
  for (uint64_t base = 0; base < data().size(); base += 4 * kChunk) {
    // The first read at 0 starts the stream; the rest come out of order.
    for (uint64_t i : {0, 2, 1, 3}) {
      ASSERT_EQ(ReadAndCheck(*r, base + i * kChunk, kChunk), 0);
    }
    pf_->WaitIdle();
    if (base >= 32 * kMiB) most_used = std::max(most_used, pf_->budget().used());
  }
  // The window ahead, the part being read and the last part's overshoot:
  // nothing behind (the distance rule alone kept 64 MiB behind).
  EXPECT_LE(most_used, r->stats().window + 2 * cfg_.part_size);
  EXPECT_EQ(src_->bytes_fetched(), data().size());
  EXPECT_EQ(r->stats().stream_starts, 1u);
  EXPECT_TRUE(r->stats().sequential);
  EXPECT_EQ(r->stats().rereads, 0u);
  // A page read again after its part went is fetched again, correctly, and
  // counted as a re-read (the kernel asks again for pages it dropped).
  ASSERT_EQ(ReadAndCheck(*r, 40 * kMiB + 4096, 8192), 0);
  pf_->WaitIdle();
  EXPECT_EQ(r->stats().seeks, 0u);
  EXPECT_EQ(r->stats().rereads, 1u);
  EXPECT_EQ(r->stats().reread_bytes_fetched, src_->bytes_fetched() - data().size());
  EXPECT_GT(r->stats().reread_bytes_fetched, 0u);
}

TEST_F(ObjectReaderTest, ARereadThatAlsoCoversAHeldPartIsCountedWhole) {
  // The kernel's READs do not follow part boundaries: one that asks again for
  // released pages and also for pages of a part still held is a re-read too,
  // and its whole fetch is counted.
  Init(96 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < 40 * kMiB; off += kMiB) {
    ASSERT_EQ(ReadAndCheck(*r, off, kMiB), 0);
  }
  pf_->WaitIdle();
  ASSERT_EQ(r->stats().rereads, 0u);
  ASSERT_EQ(ReadAndCheck(*r, 30 * kMiB, 10 * kMiB + 4096), 0);
  pf_->WaitIdle();
  EXPECT_EQ(r->stats().rereads, 1u);
  EXPECT_GE(r->stats().reread_bytes_fetched, 10 * kMiB);
  EXPECT_EQ(r->stats().seeks, 0u);
}

TEST_F(ObjectReaderTest, ALateFirstReadOfAPartReleasedByDistanceIsNoReread) {
  // One page of the first part is never read, so that part leaves the stream
  // by the distance rule only, and is kept; reading the page later is a first
  // read, not a re-read, served by the kept part.
  Init(96 * kMiB);
  auto r = pf_->Open(obj_);
  const uint64_t kChunk = 1 * kMiB;
  ASSERT_EQ(ReadAndCheck(*r, 0, kChunk - 4096), 0);
  for (uint64_t off = kChunk; off < data().size(); off += kChunk) {
    ASSERT_EQ(ReadAndCheck(*r, off, kChunk), 0);
  }
  pf_->WaitIdle();
  const uint64_t fetched = src_->bytes_fetched();
  ASSERT_EQ(ReadAndCheck(*r, kChunk - 4096, 4096), 0);
  pf_->WaitIdle();
  EXPECT_EQ(src_->bytes_fetched(), fetched);  // its part was kept
  EXPECT_EQ(r->stats().rereads, 0u);
  EXPECT_EQ(r->stats().reread_bytes_fetched, 0u);
}

TEST_F(ObjectReaderTest, BudgetIsNeverExceededAndFetchingResumes) {
  cfg_.initial_window = 32 * kMiB;  // a window past the budget from the start
  Init(100 * kMiB, /*budget=*/24 * kMiB);
  // The reader stalls below: what stops fetching is the stream's share of
  // the budget (AheadCap) or the budget itself, never the window.
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < 16 * kMiB; off += 128 * kKiB)
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  pf_->WaitIdle();
  // The reader stalls: fetching stops at the budget.
  const uint64_t stalled_count = src_->fetch_count();
  EXPECT_LE(pf_->budget().used(), 24 * kMiB);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(src_->fetch_count(), stalled_count);
  // The reader goes on: fetching resumes as consumed parts are released.
  for (uint64_t off = 16 * kMiB; off < data().size(); off += 128 * kKiB) {
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  }
  EXPECT_GT(src_->fetch_count(), stalled_count);
  EXPECT_LE(pf_->budget().peak(), 24 * kMiB);
  EXPECT_EQ(pf_->budget().forced_bytes(), 0u);
  EXPECT_EQ(OverlapBytes(src_->fetches()), 0u);
}

TEST_F(ObjectReaderTest, BudgetCountsThePooledBufferAShortPartHolds) {
  // A stream's first part (4 MiB while its window is 4 MiB) sits in one of
  // the pool's 8 MiB buffers, all of it mapped and faulted in: the budget
  // counts the 8 MiB, or a mount's readers could hold twice their budget.
  cfg_.initial_window = 4 * kMiB;
  Init(64 * kMiB);
  auto r = pf_->Open(obj_);
  src_->SetPaused(true);
  std::promise<Result<ReadData>> p;
  r->ReadFromParts(0, 128 * kKiB, [&p](Result<ReadData> d) { p.set_value(std::move(d)); });
  const auto fetches = src_->fetches();
  ASSERT_FALSE(fetches.empty());
  EXPECT_EQ(fetches[0].size, 4 * kMiB);
  for (const auto& f : fetches) EXPECT_LE(f.size, cfg_.part_size);
  EXPECT_EQ(pf_->budget().used(), fetches.size() * cfg_.part_size);
  src_->SetPaused(false);
  ASSERT_TRUE(p.get_future().get().ok());
  r->Close();
  pf_->WaitIdle();
  EXPECT_EQ(pf_->budget().used(), 0u);
}

TEST_F(ObjectReaderTest, TwoReadersShareTheBudget) {
  Init(64 * kMiB, /*budget=*/32 * kMiB);
  auto a = pf_->Open(obj_);
  auto b = pf_->Open(obj_);
  std::thread ta([&] {
    for (uint64_t off = 0; off < data().size(); off += 256 * kKiB)
      EXPECT_EQ(ReadAndCheck(*a, off, 256 * kKiB), 0);
  });
  std::thread tb([&] {
    for (uint64_t off = 0; off < data().size(); off += 256 * kKiB)
      EXPECT_EQ(ReadAndCheck(*b, off, 256 * kKiB), 0);
  });
  ta.join();
  tb.join();
  // Demand reads may borrow past a full budget, bounded by the reads in flight.
  EXPECT_LE(pf_->budget().peak(), 32 * kMiB + 2 * cfg_.part_size);
}

TEST_F(ObjectReaderTest, CloseReleasesEverything) {
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < 20 * kMiB; off += 128 * kKiB)
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  pf_->WaitIdle();
  EXPECT_GT(pf_->budget().used(), 0u);
  r->Close();
  EXPECT_EQ(pf_->budget().used(), 0u);  // at once: nothing was in flight
  std::vector<std::byte> buf(10);
  Result<size_t> after = r->Read(0, buf);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().errno_value, EBADF);
}

TEST_F(ObjectReaderTest, CloseWithFetchesInFlightReleasesWhenTheyEnd) {
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  ASSERT_EQ(ReadAndCheck(*r, 0, 128 * kKiB), 0);
  src_->SetPaused(true);
  std::promise<Result<ReadData>> p;
  r->ReadFromParts(3 * kMiB, 128 * kKiB, [&p](Result<ReadData> d) { p.set_value(std::move(d)); });
  r.reset();  // close while fetches are held by the network
  src_->SetPaused(false);
  Result<ReadData> d = p.get_future().get();  // the read in progress still completes
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(std::memcmp(d->segments()[0].data(), data().data() + 3 * kMiB, d->segments()[0].size()),
            0);
  d = MakeError(EIO, "x", "drop the pins");
  pf_->WaitIdle();
  EXPECT_EQ(pf_->budget().used(), 0u);
}

TEST_F(ObjectReaderTest, ConcurrentReadsOfOneMissingRangeShareOneFetch) {
  Init(100 * kMiB);
  auto r = pf_->Open(obj_);
  src_->SetPaused(true);
  std::vector<std::future<int>> results;
  const uint64_t base = 30 * kMiB;
  // Descending offsets inside one floor-sized block: never a sequential run.
  // Each read is planned before the next starts (a sleep alone let a loaded
  // machine reorder them into an ascending run, which starts a stream).
  uint64_t planned = 0;
  for (uint64_t off : {base + 48 * kKiB, base + 32 * kKiB, base + 16 * kKiB, base}) {
    results.push_back(
        std::async(std::launch::async, [&, off] { return ReadAndCheck(*r, off, 4 * kKiB); }));
    ++planned;
    while (r->stats().reads < planned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(src_->fetch_count(), 1u);
  src_->SetPaused(false);
  for (auto& f : results) EXPECT_EQ(f.get(), 0);
  EXPECT_EQ(src_->fetch_count(), 1u);
}

TEST_F(ObjectReaderTest, FailedPartFailsItsReadsAndALaterReadRetries) {
  Init(64 * kMiB);
  std::atomic<int> injected{0};
  src_->SetFailure([&](const ObjectVersion&, uint64_t off, uint64_t) -> std::optional<Error> {
    if (off == 0 && injected.fetch_add(1) == 0) return MakeError(EIO, "InternalError", "injected");
    return std::nullopt;
  });
  auto r = pf_->Open(obj_);
  src_->SetPaused(true);
  // Two reads waiting on the first part [0, 1 MiB), which will fail.
  std::promise<Result<ReadData>> p1, p2;
  r->ReadFromParts(0, 128 * kKiB, [&p1](Result<ReadData> d) { p1.set_value(std::move(d)); });
  r->ReadFromParts(512 * kKiB, 128 * kKiB,
                   [&p2](Result<ReadData> d) { p2.set_value(std::move(d)); });
  src_->SetPaused(false);
  Result<ReadData> d1 = p1.get_future().get();
  Result<ReadData> d2 = p2.get_future().get();
  ASSERT_FALSE(d1.ok());
  ASSERT_FALSE(d2.ok());
  EXPECT_EQ(d1.error().errno_value, EIO);
  EXPECT_EQ(d1.error().code, "InternalError");
  EXPECT_EQ(d2.error().errno_value, EIO);
  // Reads that do not need the failed part are unaffected.
  EXPECT_EQ(ReadAndCheck(*r, kMiB + 4096, 128 * kKiB), 0);
  // The failure was not cached: the next read fetches the part again.
  EXPECT_EQ(ReadAndCheck(*r, 0, 128 * kKiB), 0);
  EXPECT_EQ(ReadAndCheck(*r, 512 * kKiB, 128 * kKiB), 0);
  EXPECT_EQ(injected.load(), 2);
}

TEST_F(ObjectReaderTest, FailureMidStreamIsRetriedAndTheFileReadsExactly) {
  Init(64 * kMiB);
  std::atomic<int> injected{0};
  const uint64_t bad = 20 * kMiB + 5;
  src_->SetFailure([&](const ObjectVersion&, uint64_t off, uint64_t len) -> std::optional<Error> {
    if (off <= bad && bad < off + len && injected.fetch_add(1) == 0) {
      return MakeError(EIO, "InternalError", "injected");
    }
    return std::nullopt;
  });
  auto r = pf_->Open(obj_);
  uint64_t off = 0;
  int errors = 0;
  while (off < data().size()) {
    const int rc = ReadAndCheck(*r, off, 128 * kKiB);
    if (rc == 0) {
      off += 128 * kKiB;
      continue;
    }
    // Only a read needing the failed part may see the error, and only once.
    ASSERT_EQ(rc, EIO);
    EXPECT_LE(off, bad);
    EXPECT_GT(off + cfg_.part_size + 128 * kKiB, bad);
    ASSERT_LT(++errors, 2) << "retry did not succeed";
  }
  EXPECT_EQ(injected.load(), 2);  // the failed part was fetched again, once
}

TEST_F(ObjectReaderTest, FailedRandomBlockIsRetried) {
  Init(64 * kMiB);
  std::atomic<int> injected{0};
  src_->SetFailure([&](const ObjectVersion&, uint64_t, uint64_t) -> std::optional<Error> {
    if (injected.fetch_add(1) == 0) return MakeError(EIO, "SlowDown", "injected");
    return std::nullopt;
  });
  auto r = pf_->Open(obj_);
  EXPECT_EQ(ReadAndCheck(*r, 9 * kMiB, 4096), EIO);
  EXPECT_EQ(ReadAndCheck(*r, 9 * kMiB, 4096), 0);
  EXPECT_EQ(src_->fetch_count(), 2u);
}

TEST_F(ObjectReaderTest, ObjectChangedUnderTheReaderFailsWithEio) {
  Init(64 * kMiB);
  auto r = pf_->Open(obj_);
  for (uint64_t off = 0; off < 2 * kMiB; off += 128 * kKiB)
    ASSERT_EQ(ReadAndCheck(*r, off, 128 * kKiB), 0);
  pf_->WaitIdle();
  src_->Put("bkt", "big.bin", testing::SharedPattern(64 * kMiB, 99), "\"v2\"");
  int rc = 0;
  uint64_t off = 2 * kMiB;
  // Bytes already fetched (version 1) are still served and checked against
  // version 1; the first part fetched after the change fails with EIO.
  for (; off < data().size() && rc == 0; off += 128 * kKiB) rc = ReadAndCheck(*r, off, 128 * kKiB);
  EXPECT_EQ(rc, EIO);
  EXPECT_LT(off, data().size());
}

TEST_F(ObjectReaderTest, SmallObjectIsFetchedWholeOnce) {
  src_ = std::make_shared<FakeRangeSource>();
  shared_ = testing::SharedPattern(3 * kMiB + 17, 3);
  obj_ = src_->Put("bkt", "small.bin", shared_, "\"s\"");
  pf_ = std::make_unique<Prefetcher>(cfg_, src_);
  auto r = pf_->Open(obj_);
  for (uint64_t off : {uint64_t{2 * kMiB}, uint64_t{0}, uint64_t{100}, uint64_t{3 * kMiB}}) {
    ASSERT_EQ(ReadAndCheck(*r, off, 64 * kKiB), 0);
  }
  ASSERT_EQ(src_->fetch_count(), 1u);
  EXPECT_EQ(src_->fetches()[0].size, data().size());
}

TEST_F(ObjectReaderTest, RandomReaderGetsTheWholeObjectOnceItsFetchesCostAsMuch) {
  // Rows of an HDF5 file read at random: each read fetches its pages until the
  // reads have sent as many GETs as the whole object takes (40 MiB in 8 MiB
  // parts: 5, at least random_whole_min_fetches); then the object is fetched
  // in parts and every later read is served without a fetch.
  cfg_.part_size = 8 * kMiB;
  cfg_.random_whole_min_fetches = 16;
  Init(40 * kMiB);
  auto r = pf_->Open(obj_);
  std::mt19937_64 rng(11);
  // (A read may hit a recent block and fetch nothing: count fetches, not reads.)
  for (int i = 0; i < 100 && src_->fetch_count() < 16; ++i) {
    EXPECT_FALSE(r->stats().holds_whole) << "after " << src_->fetch_count() << " fetches";
    ASSERT_EQ(ReadAndCheck(*r, RandomRow(rng, 0), 4 * kKiB), 0);
    pf_->WaitIdle();
  }
  ASSERT_TRUE(r->stats().holds_whole);
  const uint64_t fetches = src_->fetch_count();
  EXPECT_EQ(fetches, 16u + 5u);  // the reads' pages, then the five parts
  for (int i = 0; i < 500; ++i) ASSERT_EQ(ReadAndCheck(*r, RandomRow(rng, 0), 4 * kKiB), 0);
  // Reads across part boundaries and the end are served from the held parts too.
  ASSERT_EQ(ReadAndCheck(*r, 8 * kMiB - 2 * kKiB, 4 * kKiB), 0);
  ASSERT_EQ(ReadAndCheck(*r, 40 * kMiB - 4 * kKiB, 64 * kKiB), 0);
  pf_->WaitIdle();
  EXPECT_EQ(src_->fetch_count(), fetches);
  // The five held parts, each fetched once, exactly cover the object.
  uint64_t held_bytes = 0;
  for (const auto& f : src_->fetches()) {
    if (f.size == 8 * kMiB) held_bytes += f.size;
  }
  EXPECT_EQ(held_bytes, 40 * kMiB);
  r->Close();
  pf_->WaitIdle();
  EXPECT_EQ(pf_->budget().used(), 0u);
}

TEST_F(ObjectReaderTest, ReadersOfOneObjectShareOneHeldCopy) {
  // The workers of a data loader each open the same file: once one reader
  // holds it, another finds it after its first miss and fetches no more.
  cfg_.part_size = 8 * kMiB;
  cfg_.random_whole_min_fetches = 4;
  Init(40 * kMiB);
  auto a = pf_->Open(obj_);
  auto b = pf_->Open(obj_);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100 && !a->stats().holds_whole; ++i) {
    ASSERT_EQ(ReadAndCheck(*a, RandomRow(rng, 0), 4 * kKiB), 0);
  }
  ASSERT_TRUE(a->stats().holds_whole);
  pf_->WaitIdle();
  const uint64_t fetches = src_->fetch_count();
  const uint64_t used = pf_->budget().used();
  EXPECT_GE(used, 40 * kMiB);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(ReadAndCheck(*b, RandomRow(rng, 0), 4 * kKiB), 0);
  pf_->WaitIdle();
  EXPECT_TRUE(b->stats().holds_whole);
  EXPECT_LE(src_->fetch_count(), fetches + 1);                // b's first miss, before it looked
  EXPECT_LE(pf_->budget().used(), used + cfg_.random_floor);  // one copy
  a->Close();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(ReadAndCheck(*b, RandomRow(rng, 0), 4 * kKiB), 0);
  EXPECT_LE(src_->fetch_count(), fetches + 1);  // still held for b
  b->Close();
  pf_->WaitIdle();
  EXPECT_EQ(pf_->budget().used(), 0u);
}

TEST_F(ObjectReaderTest, ConcurrentRandomReadersOfOneObjectGetExactBytes) {
  // Four loader workers, each with its own reader of one file, reading rows
  // at random while the held copy fills: every byte exact, one copy held.
  cfg_.part_size = 4 * kMiB;
  cfg_.random_whole_min_fetches = 8;
  Init(32 * kMiB);
  std::vector<std::thread> workers;
  std::atomic<int> errors{0};
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      auto r = pf_->Open(obj_);
      std::mt19937_64 rng(100 + w);
      for (int i = 0; i < 300; ++i) {
        const uint64_t off = RandomRow(rng, 1);  // 8 KiB reads: not the last row
        if (ReadAndCheck(*r, off, 8 * kKiB) != 0) errors.fetch_add(1);
      }
      if (!r->stats().holds_whole) errors.fetch_add(1);
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_EQ(errors.load(), 0);
  pf_->WaitIdle();
  // At most one copy of the object (32 MiB) was fetched in parts of 4 MiB.
  uint64_t part_bytes = 0;
  for (const auto& f : src_->fetches()) {
    if (f.size == 4 * kMiB) part_bytes += f.size;
  }
  EXPECT_EQ(part_bytes, 32 * kMiB);
  EXPECT_EQ(pf_->budget().used(), 0u);
}

TEST_F(ObjectReaderTest, ObjectsTooLargeForTheBudgetOrTheLimitAreNeverHeld) {
  cfg_.part_size = 8 * kMiB;
  cfg_.random_whole_max = 32 * kMiB;
  Init(40 * kMiB);  // over random_whole_max
  {
    auto r = pf_->Open(obj_);
    std::mt19937_64 rng(3);
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(ReadAndCheck(*r, (1 + rng() % 10000) * 4 * kKiB, 4 * kKiB), 0);
    }
    pf_->WaitIdle();
    EXPECT_FALSE(r->stats().holds_whole);
    for (const auto& f : src_->fetches()) EXPECT_LE(f.size, cfg_.random_floor);
  }
  cfg_.random_whole_max = 1ull << 30;
  Init(40 * kMiB, /*budget=*/128 * kMiB);  // over a quarter of the budget
  auto r = pf_->Open(obj_);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(ReadAndCheck(*r, (1 + rng() % 10000) * 4 * kKiB, 4 * kKiB), 0);
  }
  pf_->WaitIdle();
  EXPECT_FALSE(r->stats().holds_whole);
}

TEST_F(ObjectReaderTest, AFailedHeldPartIsFetchedAgainByTheReadThatNeedsIt) {
  cfg_.part_size = 8 * kMiB;
  cfg_.random_whole_min_fetches = 4;
  Init(32 * kMiB);
  std::atomic<int> injected{0};
  src_->SetFailure([&](const ObjectVersion&, uint64_t off, uint64_t len) -> std::optional<Error> {
    if (off == 8 * kMiB && len == 8 * kMiB && injected.fetch_add(1) == 0) {
      return MakeError(EIO, "InternalError", "injected");
    }
    return std::nullopt;
  });
  auto r = pf_->Open(obj_);
  for (uint64_t off : {1 * kMiB, 20 * kMiB, 3 * kMiB, 30 * kMiB}) {
    ASSERT_EQ(ReadAndCheck(*r, off, 4 * kKiB), 0);
  }
  pf_->WaitIdle();
  ASSERT_TRUE(r->stats().holds_whole);
  ASSERT_EQ(injected.load(), 1);
  // Every byte reads exactly, the failed part's bytes included.
  for (uint64_t off = 0; off < 32 * kMiB; off += 512 * kKiB) {
    ASSERT_EQ(ReadAndCheck(*r, off + 4 * kKiB, 4 * kKiB), 0) << off;
  }
}

}  // namespace
}  // namespace bucketfs::prefetch
