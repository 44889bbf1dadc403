// FakeRangeSource: an in-process RangeSource for tests. Objects are byte
// vectors put by the test; every fetch is recorded. Knobs: a latency (0 =
// complete inline, inside FetchAsync), pausing (completions queue until
// resumed or completed one by one by the test, to model a stalled network, a
// slow reader or a store slower than its reader), failure injection by
// predicate, and a replaced object (fetches naming the old ETag then fail
// PreconditionFailed, like a real If-Match). Completions with latency run on
// one timer thread, in deadline order, all fetches overlapping.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "prefetch/range_source.h"

namespace bucketfs::prefetch::testing {

// Deterministic bytes: byte i of a pattern depends on i and the seed.
std::vector<std::byte> PatternBytes(uint64_t size, uint64_t seed);
// The same, computed once per (size, seed) and shared (tests reuse large objects).
std::shared_ptr<const std::vector<std::byte>> SharedPattern(uint64_t size, uint64_t seed);

class FakeRangeSource : public RangeSource {
 public:
  struct Fetch {
    std::string key;
    uint64_t offset = 0;
    uint64_t size = 0;
    bool for_caller = false;  // through FetchForCaller
  };
  using FailurePredicate =
      std::function<std::optional<Error>(const ObjectVersion&, uint64_t offset, uint64_t size)>;

  FakeRangeSource();
  ~FakeRangeSource() override;  // completes whatever is still queued

  // Stores (or replaces) an object; returns the version readers should open.
  ObjectVersion Put(const std::string& bucket, const std::string& key, std::vector<std::byte> data,
                    const std::string& etag);
  // Same, sharing the bytes with the caller (large objects, no copy).
  ObjectVersion Put(const std::string& bucket, const std::string& key,
                    std::shared_ptr<const std::vector<std::byte>> data, const std::string& etag);

  void SetLatency(std::chrono::microseconds latency);
  void SetPaused(bool paused);
  // While paused: runs the oldest held completion on the calling thread, so
  // that fetch has ended (and its callback run) when this returns; false
  // when none is held. A test completing one fetch at a time, in the order
  // they were issued, plays a store exactly as slow as it chooses.
  bool CompleteOldestPaused() { return CompletePaused(false); }
  // The same for the fetch issued last: a response that overtakes older ones.
  bool CompleteNewestPaused() { return CompletePaused(true); }
  size_t paused_count() const;
  void SetFailure(FailurePredicate pred);

  void FetchAsync(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                  std::function<void(Status)> done) override;
  // Logged as for_caller, then as FetchAsync (so on the caller's thread only
  // with no latency).
  void FetchForCaller(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                      std::function<void(Status)> done) override;

  std::vector<Fetch> fetches() const;
  uint64_t fetch_count() const;
  uint64_t bytes_fetched() const;
  int max_in_flight() const;
  int in_flight() const;
  void ClearLog();

 private:
  bool CompletePaused(bool newest);
  struct Pending {
    std::chrono::steady_clock::time_point due;
    std::function<void()> run;
  };
  struct Stored {
    std::string etag;
    std::shared_ptr<const std::vector<std::byte>> data;
  };
  void TimerLoop();
  void Record(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
              bool for_caller, std::function<void(Status)> done);
  void Complete(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                const std::function<void(Status)>& done);

  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, Stored> objects_;  // by bucket + "/" + key
  std::chrono::microseconds latency_{0};
  bool paused_ = false;
  bool stopping_ = false;
  FailurePredicate failure_;
  std::vector<Fetch> log_;
  uint64_t bytes_ = 0;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  std::multimap<std::chrono::steady_clock::time_point, std::function<void()>> queue_;
  std::deque<std::function<void()>> paused_queue_;  // oldest first
  std::thread timer_;
};

}  // namespace bucketfs::prefetch::testing
