// Test helpers shared by the StagedUpload tests (staged_upload_test.cc,
// staged_upload_prepare_test.cc, filled_parts_test.cc): a FakeObjectClient
// that can hold or delay upload completions, byte patterns, and a fixture
// with a writer context over small parts.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "s3/testing/fake_object_client.h"
#include "upload/staged_upload.h"

namespace bucketfs::upload::testing {

using s3::testing::FakeObjectClient;

// Holds UploadPartAsync completions until released (or completes them on a
// background thread after a delay, when `async_delay` is set).
class DeferredClient : public FakeObjectClient {
 public:
  ~DeferredClient() override { Drain(); }
  void UploadPartAsync(const s3::UploadPartParams& p, std::span<const std::byte> body,
                       std::function<void(Result<s3::UploadPartResult>)> done) override {
    if (async_delay.count() > 0) {
      MutexLock lock(mu);
      threads.emplace_back([this, p, body, done = std::move(done)] {
        std::this_thread::sleep_for(async_delay);
        done(UploadPart(p, body));
      });
      return;
    }
    if (!hold) return FakeObjectClient::UploadPartAsync(p, body, std::move(done));
    MutexLock lock(mu);
    held.push_back([this, p, body, done = std::move(done)] { done(UploadPart(p, body)); });
  }
  void ReleaseHeld() {
    std::deque<std::function<void()>> run;
    {
      MutexLock lock(mu);
      run.swap(held);
    }
    for (auto& f : run) f();
  }
  void Drain() {
    std::vector<std::thread> t;
    {
      MutexLock lock(mu);
      t.swap(threads);
    }
    for (auto& th : t) th.join();
  }

  bool hold = false;
  std::chrono::milliseconds async_delay{0};
  Mutex mu;
  std::deque<std::function<void()>> held;
  std::vector<std::thread> threads;
};

inline std::string Pattern(size_t n, unsigned seed = 1) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

inline std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

class StagedUploadTest : public ::testing::Test {
 protected:
  static constexpr const char* kBucket = "bkt";

  StagedUploadTest() {
    client_->CreateBucketNamed(kBucket);
    dir_ = std::filesystem::temp_directory_path() /
           ("staged_upload_test-" + std::to_string(::getpid()));
    ctx_.client = client_;
    ctx_.writer.part_size = 1024;
    ctx_.writer.max_parts_in_flight = 2;
    ctx_.staging.dir = dir_.string();
    ctx_.staging.settle_bytes = 0;
    ctx_.budget = std::make_shared<memory::PartBufferBudget>(1 << 20);
    ctx_.space = std::make_shared<cache::StagingSpace>();
    EXPECT_TRUE(cache::EnsureStagingDir(ctx_.staging.dir).ok());
  }
  ~StagedUploadTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<StagedUpload> Make(const std::string& key,
                                     std::optional<BaseObject> base = std::nullopt) {
    auto upload = StagedUpload::Open(ctx_, kBucket, key, std::move(base));
    EXPECT_TRUE(upload.ok()) << upload.error().ToString();
    return upload.ok() ? std::move(*upload) : nullptr;
  }

  // Stores `base` under `key` and opens an upload over it, as an open without
  // O_TRUNC does (append or in-place change).
  std::unique_ptr<StagedUpload> MakeOver(const std::string& key, const std::string& base) {
    client_->Put(kBucket, key, base);
    auto head = client_->HeadObject({kBucket, key, "", ""});
    EXPECT_TRUE(head.ok());
    return Make(key, BaseObject{head.ok() ? head->etag : "", base.size()});
  }

  std::shared_ptr<DeferredClient> client_ = std::make_shared<DeferredClient>();
  std::filesystem::path dir_;
  StagingContext ctx_;
};

}  // namespace bucketfs::upload::testing
