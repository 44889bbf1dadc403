// Which thread answers a read of a prefetch-backed reader: a read that waited
// for a fetch is answered on the factory's reply threads, never on the thread
// that completed the fetch (the transport's), and a read whose bytes are
// already there is answered on the calling thread.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "fuse/prefetch_reader.h"

namespace bucketfs::fs {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kSize = 1 << 20;

std::byte ByteAt(uint64_t i) { return static_cast<std::byte>((i * 13 + i / 4096) & 0xff); }

// Fetches wait until the test completes them, on the test's "transport" thread.
class HeldSource : public prefetch::RangeSource {
 public:
  void FetchAsync(const prefetch::ObjectVersion& /*object*/, uint64_t offset,
                  std::span<std::byte> dest, std::function<void(Status)> done) override {
    std::lock_guard lock(mu_);
    held_.push_back([offset, dest, done = std::move(done)] {
      for (size_t i = 0; i < dest.size(); ++i) dest[i] = ByteAt(offset + i);
      done(Status::Ok());
    });
  }

  void CompleteAll() {
    std::vector<std::function<void()>> held;
    {
      std::lock_guard lock(mu_);
      held.swap(held_);
    }
    for (auto& f : held) f();
  }

 private:
  std::mutex mu_;
  std::vector<std::function<void()>> held_;
};

struct Reply {
  std::thread::id thread;
  bool ok = false;
};

class PrefetchReaderRepliesTest : public ::testing::Test {
 protected:
  std::shared_ptr<FileReaderFactory> Factory(int reply_threads) {
    prefetch::PrefetchConfig pc;
    pc.part_size = 256 << 10;
    pc.initial_window = 64 << 10;
    pc.small_object_threshold = 1024;
    prefetcher_ = std::make_shared<prefetch::Prefetcher>(pc, source_);
    return MakePrefetchReaderFactory(prefetcher_, reply_threads);
  }

  // Reads [offset, +size) and reports the replying thread; `hold` (may be
  // null) blocks the reply until it is ready.
  static void Read(FileReader& reader, uint64_t offset, size_t size, std::promise<Reply>& out,
                   std::shared_future<void> hold = {}) {
    reader.ReadSegments(offset, size,
                        [&out, offset, size, hold](
                            const Error* e, std::span<const std::span<const std::byte>> data) {
                          Reply r{std::this_thread::get_id(), e == nullptr};
                          uint64_t pos = offset;
                          for (const auto& seg : data) {
                            for (std::byte b : seg) r.ok = r.ok && b == ByteAt(pos++);
                          }
                          r.ok = r.ok && pos == offset + size;
                          if (hold.valid()) hold.wait();
                          out.set_value(r);
                        });
  }

  // Closes the reader, then completes what its window still has in flight
  // (the factory waits for every fetch to end).
  void Finish(std::unique_ptr<FileReader>& reader) {
    reader.reset();
    source_->CompleteAll();
  }

  std::shared_ptr<HeldSource> source_ = std::make_shared<HeldSource>();
  std::shared_ptr<prefetch::Prefetcher> prefetcher_;
};

TEST_F(PrefetchReaderRepliesTest, WaitedReadIsAnsweredOffTheTransportThread) {
  auto factory = Factory(2);
  auto reader = factory->Open({"b", "k", "e", kSize});
  std::promise<Reply> replied;
  std::promise<void> release;
  Read(*reader, 0, 4096, replied, release.get_future().share());

  // The reply blocks until released: the transport thread must not wait for it.
  std::thread::id transport_id;
  auto transport = std::async(std::launch::async, [&] {
    transport_id = std::this_thread::get_id();
    source_->CompleteAll();
  });
  EXPECT_EQ(transport.wait_for(10s), std::future_status::ready);
  release.set_value();
  auto reply = replied.get_future();
  ASSERT_EQ(reply.wait_for(10s), std::future_status::ready);
  const Reply r = reply.get();
  EXPECT_TRUE(r.ok);
  EXPECT_NE(r.thread, transport_id);
  EXPECT_NE(r.thread, std::this_thread::get_id());
  transport.wait();
  Finish(reader);
}

TEST_F(PrefetchReaderRepliesTest, ReadOfBytesAlreadyThereIsAnsweredOnTheCaller) {
  auto factory = Factory(2);
  auto reader = factory->Open({"b", "k", "e", kSize});
  std::promise<Reply> first;
  Read(*reader, 0, 4096, first);
  source_->CompleteAll();
  ASSERT_TRUE(first.get_future().get().ok);

  std::promise<Reply> second;
  Read(*reader, 4096, 4096, second);  // same part, already fetched
  auto reply = second.get_future();
  ASSERT_EQ(reply.wait_for(0s), std::future_status::ready);  // answered inline
  const Reply r = reply.get();
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.thread, std::this_thread::get_id());
  Finish(reader);
}

TEST_F(PrefetchReaderRepliesTest, WithoutReplyThreadsTheTransportThreadAnswers) {
  auto factory = Factory(0);
  auto reader = factory->Open({"b", "k", "e", kSize});
  std::promise<Reply> replied;
  Read(*reader, 0, 4096, replied);
  std::thread::id transport_id;
  std::thread transport([&] {
    transport_id = std::this_thread::get_id();
    source_->CompleteAll();
  });
  transport.join();
  const Reply r = replied.get_future().get();
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.thread, transport_id);
  Finish(reader);
}

// Shutdown destroys the FUSE session after Quiesce: an answer given later
// would use a freed session, so Quiesce must wait for answers still queued
// or running on the reply threads, not only for the fetches.
TEST_F(PrefetchReaderRepliesTest, QuiesceReturnsOnlyAfterEveryWaitedReadWasAnswered) {
  auto factory = Factory(2);
  auto reader = factory->Open({"b", "k", "e", kSize});
  std::promise<Reply> replied;
  std::promise<void> release;
  Read(*reader, 0, 4096, replied, release.get_future().share());

  // The transport completes every fetch, the window's later ones included
  // (a jthread: stopped and joined on every way out, a failed ASSERT too).
  std::jthread transport([&](const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      source_->CompleteAll();
      std::this_thread::sleep_for(1ms);
    }
  });
  auto reply = replied.get_future();
  auto quiesced = std::async(std::launch::async, [&] { factory->Quiesce(); });
  // The answer is held on a reply thread: Quiesce must still be waiting.
  EXPECT_EQ(quiesced.wait_for(300ms), std::future_status::timeout);
  EXPECT_EQ(reply.wait_for(0s), std::future_status::timeout);
  release.set_value();
  ASSERT_EQ(quiesced.wait_for(10s), std::future_status::ready);
  // Once Quiesce returned, the answer was given.
  ASSERT_EQ(reply.wait_for(0s), std::future_status::ready);
  EXPECT_TRUE(reply.get().ok);
  transport = {};  // stop and join before the reader goes
  reader.reset();
}

}  // namespace
}  // namespace bucketfs::fs
