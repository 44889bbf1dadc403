#include "prefetch/testing/fake_range_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch::testing {

std::vector<std::byte> PatternBytes(uint64_t size, uint64_t seed) {
  std::vector<std::byte> out(size);
  for (uint64_t w = 0; w * 8 < size; ++w) {
    // splitmix64 of the word index: any misplaced or stale byte shows.
    uint64_t z = (w + seed * 0x9E3779B97F4A7C15ull) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const uint64_t n = std::min<uint64_t>(8, size - w * 8);
    std::memcpy(out.data() + w * 8, &z, n);
  }
  return out;
}

std::shared_ptr<const std::vector<std::byte>> SharedPattern(uint64_t size, uint64_t seed) {
  static Mutex mu;
  static std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<const std::vector<std::byte>>>
      cache;
  MutexLock lock(mu);
  auto& slot = cache[{size, seed}];
  if (!slot) slot = std::make_shared<const std::vector<std::byte>>(PatternBytes(size, seed));
  return slot;
}

FakeRangeSource::FakeRangeSource() : timer_([this] { TimerLoop(); }) {}

FakeRangeSource::~FakeRangeSource() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    paused_ = false;
    for (auto& f : paused_queue_) queue_.emplace(std::chrono::steady_clock::now(), std::move(f));
    paused_queue_.clear();
  }
  cv_.NotifyAll();
  timer_.join();
}

ObjectVersion FakeRangeSource::Put(const std::string& bucket, const std::string& key,
                                   std::vector<std::byte> data, const std::string& etag) {
  return Put(bucket, key, std::make_shared<const std::vector<std::byte>>(std::move(data)), etag);
}

ObjectVersion FakeRangeSource::Put(const std::string& bucket, const std::string& key,
                                   std::shared_ptr<const std::vector<std::byte>> data,
                                   const std::string& etag) {
  ObjectVersion v{bucket, key, etag, data->size()};
  MutexLock lock(mu_);
  objects_[bucket + "/" + key] = Stored{etag, std::move(data)};
  return v;
}

void FakeRangeSource::SetLatency(std::chrono::microseconds latency) {
  MutexLock lock(mu_);
  latency_ = latency;
}

void FakeRangeSource::SetPaused(bool paused) {
  {
    MutexLock lock(mu_);
    paused_ = paused;
    if (!paused) {
      const auto due = std::chrono::steady_clock::now() + latency_;
      for (auto& f : paused_queue_) queue_.emplace(due, std::move(f));
      paused_queue_.clear();
    }
  }
  cv_.NotifyAll();
}

bool FakeRangeSource::CompletePaused(bool newest) {
  std::function<void()> run;
  {
    MutexLock lock(mu_);
    if (paused_queue_.empty()) return false;
    if (newest) {
      run = std::move(paused_queue_.back());
      paused_queue_.pop_back();
    } else {
      run = std::move(paused_queue_.front());
      paused_queue_.pop_front();
    }
  }
  run();  // without mu_: the callback may start fetches
  return true;
}

size_t FakeRangeSource::paused_count() const {
  MutexLock lock(mu_);
  return paused_queue_.size();
}

void FakeRangeSource::SetFailure(FailurePredicate pred) {
  MutexLock lock(mu_);
  failure_ = std::move(pred);
}

void FakeRangeSource::FetchAsync(const ObjectVersion& object, uint64_t offset,
                                 std::span<std::byte> dest, std::function<void(Status)> done) {
  Record(object, offset, dest, /*for_caller=*/false, std::move(done));
}

void FakeRangeSource::FetchForCaller(const ObjectVersion& object, uint64_t offset,
                                     std::span<std::byte> dest, std::function<void(Status)> done) {
  Record(object, offset, dest, /*for_caller=*/true, std::move(done));
}

void FakeRangeSource::Record(const ObjectVersion& object, uint64_t offset,
                             std::span<std::byte> dest, bool for_caller,
                             std::function<void(Status)> done) {
  std::function<void()> run;
  bool inline_now = false;
  {
    MutexLock lock(mu_);
    log_.push_back({object.key, offset, dest.size(), for_caller});
    bytes_ += dest.size();
    max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
    std::optional<Error> err;
    if (failure_) err = failure_(object, offset, dest.size());
    auto it = objects_.find(object.bucket + "/" + object.key);
    if (!err && it == objects_.end()) {
      err = MakeError(ENOENT, "NoSuchKey", object.key);
    } else if (!err && !object.etag.empty() && it->second.etag != object.etag) {
      err = MakeError(EIO, "PreconditionFailed", "If-Match " + object.etag);
      err->http_status = 412;
    } else if (!err && offset + dest.size() > it->second.data->size()) {
      err = MakeError(EINVAL, "InvalidRange", object.key);
      err->http_status = 416;
    }
    std::shared_ptr<const std::vector<std::byte>> data;
    if (!err) data = it->second.data;
    run = [this, data, offset, dest, err, done = std::move(done)] {
      if (!err) std::memcpy(dest.data(), data->data() + offset, dest.size());
      {
        MutexLock done_lock(mu_);
        --in_flight_;
      }
      done(err ? Status(*err) : Status::Ok());
    };
    if (paused_) {
      paused_queue_.push_back(std::move(run));
    } else if (latency_.count() == 0) {
      inline_now = true;
    } else {
      queue_.emplace(std::chrono::steady_clock::now() + latency_, std::move(run));
      cv_.NotifyAll();
    }
  }
  if (inline_now) run();
}

void FakeRangeSource::TimerLoop() {
  MutexLock lock(mu_);
  while (true) {
    if (queue_.empty()) {
      if (stopping_) return;
      cv_.Wait(mu_);
      continue;
    }
    auto due = queue_.begin()->first;
    if (!stopping_ && std::chrono::steady_clock::now() < due) {
      cv_.WaitUntil(mu_, due);
      continue;
    }
    auto run = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    lock.Unlock();
    run();
    lock.Lock();
  }
}

std::vector<FakeRangeSource::Fetch> FakeRangeSource::fetches() const {
  MutexLock lock(mu_);
  return log_;
}

uint64_t FakeRangeSource::fetch_count() const {
  MutexLock lock(mu_);
  return log_.size();
}

uint64_t FakeRangeSource::bytes_fetched() const {
  MutexLock lock(mu_);
  return bytes_;
}

int FakeRangeSource::max_in_flight() const {
  MutexLock lock(mu_);
  return max_in_flight_;
}

int FakeRangeSource::in_flight() const {
  MutexLock lock(mu_);
  return in_flight_;
}

void FakeRangeSource::ClearLog() {
  MutexLock lock(mu_);
  log_.clear();
  bytes_ = 0;
  max_in_flight_ = in_flight_;
}

}  // namespace bucketfs::prefetch::testing
