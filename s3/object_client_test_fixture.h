// Shared fixture of the ObjectClient tests: a real S3Executor (signing,
// retries) over a FakeHttpTransport, path-style endpoint http://s3.test:9000,
// 3 attempts with millisecond backoff so retry tests stay fast.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>

#include "s3/fake_http_transport.h"
#include "s3/object_client_impl.h"
#include "s3/s3_executor.h"

namespace bucketfs::s3::object_client_testing {

inline std::span<const std::byte> Bytes(std::string_view s) {
  return object_client_internal::AsBytes(s);
}
inline std::string Str(std::span<const std::byte> b, size_t n) {
  return std::string(reinterpret_cast<const char*>(b.data()), n);
}

class ObjectClientTest : public ::testing::Test {
 protected:
  explicit ObjectClientTest(std::string region = "us-east-1") {
    ClientConfig config;
    config.endpoint_url = "http://s3.test:9000";
    config.force_path_style = true;
    config.region = std::move(region);
    config.max_attempts = 3;
    config.backoff_base = std::chrono::milliseconds(1);
    config.backoff_max = std::chrono::milliseconds(2);
    auto endpoint = Endpoint::FromConfig(config);
    EXPECT_TRUE(endpoint.ok());
    executor_ = std::make_unique<S3Executor>(
        fake_, *endpoint,
        std::shared_ptr<CredentialsProvider>(
            MakeStaticCredentialsProvider({"AKIDEXAMPLE", "secret", "", false})),
        config);
    client_ = MakeObjectClient(*executor_);
  }

  RecordedRequest OnlyRequest() {
    auto reqs = fake_.requests();
    EXPECT_EQ(reqs.size(), 1u);
    return reqs.empty() ? RecordedRequest{} : reqs.back();
  }

  FakeHttpTransport fake_;
  std::unique_ptr<S3Executor> executor_;
  std::unique_ptr<ObjectClient> client_;
};

inline constexpr const char* kBase = "http://s3.test:9000";

}  // namespace bucketfs::s3::object_client_testing
