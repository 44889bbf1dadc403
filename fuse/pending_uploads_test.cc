#include "fuse/pending_uploads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace bucketfs::fs {
namespace {

TEST(PendingUploadsTest, WaitForReturnsTheResultOfThatKeyOnly) {
  PendingUploads p(2, 8);
  std::promise<void> go;
  auto gate = go.get_future().share();
  p.Submit("b", "slow", [gate] {
    gate.wait();
    return Status(MakeError(EIO, "Injected", "slow failed"));
  });
  p.Submit("b", "fast", [] { return Status::Ok(); });
  EXPECT_TRUE(p.WaitFor("b", "fast").ok());
  EXPECT_TRUE(p.Pending("b", "slow"));
  EXPECT_TRUE(p.WaitFor("b", "none").ok());
  auto waited = std::async(std::launch::async, [&] { return p.WaitFor("b", "slow"); });
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  go.set_value();
  Status s = waited.get();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EIO);
  EXPECT_FALSE(p.Pending("b", "slow"));
}

TEST(PendingUploadsTest, WaitAllReportsEachFailureOnce) {
  PendingUploads p(4, 8);
  p.Submit("b", "ok", [] { return Status::Ok(); });
  p.Submit("b", "bad", [] { return Status(MakeError(EACCES, "Denied", "no")); });
  Status first = p.WaitAll();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().errno_value, EACCES);
  EXPECT_TRUE(p.WaitAll().ok());  // reported already
  const auto n = p.counts();
  EXPECT_EQ(n.submitted, 2u);
  EXPECT_EQ(n.succeeded, 1u);
  EXPECT_EQ(n.failed, 1u);
}

TEST(PendingUploadsTest, SubmitWaitsWhileTooManyArePending) {
  PendingUploads p(1, 1);
  std::promise<void> go;
  auto gate = go.get_future().share();
  p.Submit("b", "first", [gate] {
    gate.wait();
    return Status::Ok();
  });
  std::atomic<bool> submitted{false};
  std::thread second([&] {
    p.Submit("b", "second", [] { return Status::Ok(); });
    submitted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(submitted.load());  // one pending is the bound
  go.set_value();
  second.join();
  EXPECT_TRUE(submitted.load());
  EXPECT_TRUE(p.WaitAll().ok());
}

TEST(PendingUploadsTest, DestructionFinishesEveryUpload) {
  std::atomic<int> ran{0};
  {
    PendingUploads p(2, 16);
    for (int i = 0; i < 10; ++i) {
      p.Submit("b", std::to_string(i), [&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ++ran;
        return Status::Ok();
      });
    }
  }
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace bucketfs::fs
