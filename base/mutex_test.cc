#include "base/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace bucketfs {
namespace {

// A one-slot mailbox: the producer waits for the slot to empty, the consumer
// for it to fill, so every value crosses threads through a wait and a notify.
class Mailbox {
 public:
  void Put(int v) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (full_) changed_.Wait(mu_);
    value_ = v;
    full_ = true;
    changed_.NotifyAll();
  }
  int Take() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!full_) changed_.Wait(mu_);
    full_ = false;
    changed_.NotifyAll();
    return value_;
  }

 private:
  Mutex mu_;
  CondVar changed_;
  bool full_ GUARDED_BY(mu_) = false;
  int value_ GUARDED_BY(mu_) = 0;
};

TEST(Mutex, WaitAndNotifyHandValuesAcrossThreads) {
  Mailbox box;
  constexpr int kCount = 2000;
  std::thread producer([&] {
    for (int i = 1; i <= kCount; ++i) box.Put(i);
  });
  long sum = 0;
  for (int i = 1; i <= kCount; ++i) {
    const int v = box.Take();
    EXPECT_EQ(v, i);
    sum += v;
  }
  producer.join();
  EXPECT_EQ(sum, static_cast<long>(kCount) * (kCount + 1) / 2);
}

// A counter and the mutex that guards it, for tests that share one.
struct Guarded {
  Mutex mu;
  CondVar cv;
  long value GUARDED_BY(mu) = 0;
};

TEST(Mutex, LockExcludesOtherThreads) {
  Guarded g;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(g.mu);
        ++g.value;
      }
    });
  }
  for (auto& t : threads) t.join();
  MutexLock lock(g.mu);
  EXPECT_EQ(g.value, 40000);
}

TEST(Mutex, TryLockFailsWhileAnotherThreadHoldsIt) {
  Mutex mu;
  MutexLock lock(mu);
  bool taken = false;
  std::thread([&] {
    if (mu.TryLock()) {
      taken = true;
      mu.Unlock();
    }
  }).join();
  EXPECT_FALSE(taken);
  lock.Unlock();
  std::thread([&] {
    if (mu.TryLock()) {
      taken = true;
      mu.Unlock();
    }
  }).join();
  EXPECT_TRUE(taken);
}

TEST(MutexLock, UnlockLetsAnotherThreadInAndLockTakesItBack) {
  Guarded g;
  MutexLock lock(g.mu);
  std::thread other([&] {
    MutexLock inner(g.mu);
    g.value = 1;
  });
  lock.Unlock();
  other.join();
  lock.Lock();
  EXPECT_EQ(g.value, 1);
}

TEST(CondVar, WaitUntilReturnsFalseAtTheDeadline) {
  Guarded g;
  MutexLock lock(g.mu);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(20);
  bool notified = true;
  while (notified && std::chrono::steady_clock::now() < deadline) {
    notified = g.cv.WaitUntil(g.mu, deadline);
  }
  EXPECT_FALSE(notified);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

TEST(CondVar, WaitUntilReturnsTrueOnNotify) {
  Guarded g;
  std::thread notifier([&] {
    MutexLock lock(g.mu);
    g.value = 1;
    g.cv.NotifyOne();
  });
  {
    MutexLock lock(g.mu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (g.value == 0) ASSERT_TRUE(g.cv.WaitUntil(g.mu, deadline));
  }
  notifier.join();
}

struct SharedGuarded {
  SharedMutex mu;
  int value GUARDED_BY(mu) = 0;
};

TEST(SharedMutex, ReadersShareWritersExclude) {
  SharedGuarded g;
  {
    ReaderMutexLock a(g.mu);
    bool second_reader_in = false;
    std::thread([&] {
      ReaderMutexLock b(g.mu);
      second_reader_in = true;
    }).join();
    EXPECT_TRUE(second_reader_in);
    EXPECT_EQ(g.value, 0);
  }
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        WriterMutexLock lock(g.mu);
        ++g.value;
      }
    });
  }
  for (auto& t : writers) t.join();
  ReaderMutexLock lock(g.mu);
  EXPECT_EQ(g.value, 4000);
}

}  // namespace
}  // namespace bucketfs
