#include "s3/s3_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "s3/fake_http_transport.h"
#include "s3/sigv4_signer.h"

namespace bucketfs::s3 {
namespace {

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

// Writes into a buffer and checks that every offset arrives once, in order.
class BufferSink : public BodySink {
 public:
  explicit BufferSink(size_t size) : buf(size, '\0') {}
  Status Write(uint64_t offset, std::span<const std::byte> data) override {
    if (offset != next) in_order = false;
    if (offset + data.size() > buf.size()) return MakeError(EIO, "Overflow", "sink overflow");
    std::memcpy(buf.data() + offset, data.data(), data.size());
    next = offset + data.size();
    return Status::Ok();
  }
  std::string buf;
  uint64_t next = 0;
  bool in_order = true;
};

class S3ExecutorTest : public ::testing::Test {
 protected:
  S3ExecutorTest() {
    endpoint_.scheme = "http";
    endpoint_.host = "s3.test";
    endpoint_.port = 9000;
    endpoint_.path_style = true;
    config_.max_attempts = 4;
    config_.backoff_base = std::chrono::milliseconds(2);
    config_.backoff_max = std::chrono::milliseconds(10);
    exec_ = std::make_unique<S3Executor>(
        fake_, endpoint_, MakeStaticCredentialsProvider({"AKIDEXAMPLE", "SECRET", "", false}),
        config_);
  }

  static S3Request Get(std::string key) {
    // Initialized, not assigned: GCC 12 -O3 reports a false -Wrestrict for
    // string assignment from a literal when this is inlined into a lambda.
    return S3Request{.method = "GET", .bucket = "b", .key = std::move(key)};
  }

  FakeHttpTransport fake_;
  Endpoint endpoint_;
  ClientConfig config_;
  std::unique_ptr<S3Executor> exec_;
};

TEST_F(S3ExecutorTest, RetriesA503ThenSucceeds) {
  fake_.AddResponse("GET", "/b/k", FakeResponse{503, {}, "<Error><Code>SlowDown</Code></Error>"});
  fake_.AddResponse("GET", "/b/k", FakeResponse{200, {{"ETag", "\"e\""}}, "hello"});
  Result<S3Response> r = exec_->ExecuteSync(Get("k"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
  EXPECT_EQ(r->body_bytes, 5u);
  EXPECT_EQ(r->attempts, 2);
  auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].url, "http://s3.test:9000/b/k");
  EXPECT_TRUE(
      reqs[1].Header("Authorization").starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"));
  EXPECT_FALSE(reqs[1].Header("x-amz-date").empty());
  EXPECT_EQ(reqs[0].delay.count(), 0);
  EXPECT_LE(reqs[1].delay.count(), 2);  // first retry: jitter within [0, base]
}

// Records what the executor reports per attempt.
class RecordingObserver : public RequestObserver {
 public:
  void OnAttemptStart(S3Op op) override { starts.push_back(op); }
  void OnAttemptEnd(S3Op op, int http_status, std::chrono::nanoseconds latency, uint64_t bytes_in,
                    uint64_t /*bytes_out*/) override {
    ends.push_back({op, http_status});
    received += bytes_in;
    if (latency.count() < 0) negative_latency = true;
  }
  void OnRetry(S3Op op) override { retries.push_back(op); }
  std::vector<S3Op> starts, retries;
  std::vector<std::pair<S3Op, int>> ends;
  uint64_t received = 0;
  bool negative_latency = false;
};

TEST_F(S3ExecutorTest, ObserverHearsEveryAttemptItsStatusAndTheRetry) {
  RecordingObserver observer;
  // The retry's backoff really waits here, as in the real transport: the
  // observer's latency leaves it out.
  FakeHttpTransport fake(FakeTransportOptions{.delay_scale = 1.0});
  S3Executor exec(fake, endpoint_,
                  MakeStaticCredentialsProvider({"AKIDEXAMPLE", "SECRET", "", false}), config_,
                  &observer);
  fake.AddResponse("GET", "/b/k", FakeResponse{503, {}, "<Error><Code>SlowDown</Code></Error>"});
  fake.AddResponse("GET", "/b/k", FakeResponse{200, {{"ETag", "\"e\""}}, "hello"});
  S3Request req = Get("k");
  req.op = S3Op::kGet;
  ASSERT_TRUE(exec.ExecuteSync(req).ok());
  EXPECT_EQ(observer.starts, (std::vector<S3Op>{S3Op::kGet, S3Op::kGet}));
  EXPECT_EQ(observer.retries, (std::vector<S3Op>{S3Op::kGet}));
  ASSERT_EQ(observer.ends.size(), 2u);
  EXPECT_EQ(observer.ends[0].second, 503);
  EXPECT_EQ(observer.ends[1].second, 200);
  EXPECT_GE(observer.received, 5u);
  EXPECT_FALSE(observer.negative_latency);
  EXPECT_EQ(S3OpName(S3Op::kUploadPart), "UPLOAD_PART");
}

TEST_F(S3ExecutorTest, GivesUpAfterMaxAttemptsWithClearError) {
  fake_.AddResponse("GET", "/b/k",
                    FakeResponse{503,
                                 {},
                                 "<Error><Code>SlowDown</Code>"
                                 "<Message>Reduce your rate</Message></Error>"});
  Result<S3Response> r = exec_->ExecuteSync(Get("k"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 503);
  EXPECT_EQ(r.error().code, "SlowDown");
  EXPECT_NE(r.error().message.find("after 4 attempts"), std::string::npos) << r.error().message;
  EXPECT_EQ(fake_.request_count(), 4u);
}

TEST_F(S3ExecutorTest, NonIdempotentPostIsNotRetriedOn500) {
  fake_.AddResponse("POST", "/b/k",
                    FakeResponse{500, {}, "<Error><Code>InternalError</Code></Error>"});
  S3Request req;
  req.method = "POST";
  req.bucket = "b";
  req.key = "k";
  req.query = {{"uploadId", "u1"}};
  req.idempotent = false;
  Result<S3Response> r = exec_->ExecuteSync(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 500);
  EXPECT_EQ(fake_.request_count(), 1u);
  EXPECT_EQ(r.error().message.find("attempts"), std::string::npos);
}

TEST_F(S3ExecutorTest, NonIdempotentIsRetriedWhenConnectFailed) {
  FakeResponse refused;
  refused.error_code = "ConnectFailed";
  fake_.AddResponse("POST", "/b/k", refused);
  fake_.AddResponse("POST", "/b/k", FakeResponse{200, {}, "<ok/>"});
  S3Request req;
  req.method = "POST";
  req.bucket = "b";
  req.key = "k";
  req.idempotent = false;
  const std::string body = "<CompleteMultipartUpload/>";
  req.body = {reinterpret_cast<const std::byte*>(body.data()), body.size()};
  Result<S3Response> r = exec_->ExecuteSync(req);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->body, "<ok/>");
  auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].body, body);
  // Small bodies are signed with their real hash.
  EXPECT_EQ(reqs[1].Header("x-amz-content-sha256"), Sha256Hex(body));
}

TEST_F(S3ExecutorTest, LargeBodiesAreUnsignedPayload) {
  fake_.AddResponse("PUT", "/b/k", FakeResponse{200, {{"ETag", "\"x\""}}, ""});
  const std::string body(config_.sign_payload_max_bytes + 1, 'x');
  S3Request req;
  req.method = "PUT";
  req.bucket = "b";
  req.key = "k";
  req.body = {reinterpret_cast<const std::byte*>(body.data()), body.size()};
  ASSERT_TRUE(exec_->ExecuteSync(req).ok());
  EXPECT_EQ(fake_.requests()[0].Header("x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
}

TEST_F(S3ExecutorTest, RangedGetResumesAfterMidBodyResetWithExactBytes) {
  const std::string object = Pattern(100000);
  std::atomic<int> calls{0};
  fake_.AddResponder("GET", "/b/obj", [&](const RecordedRequest& req) {
    FakeResponse r = FakeHttpTransport::RangedObject(req, object, "\"v1\"");
    const int n = calls++;
    if (n == 0) {  // cut after 12345 bytes
      r.error_code = "Reset";
      r.fail_after_bytes = 12345;
    } else if (n == 1) {  // body shorter than its Content-Length
      r.error_code = "Truncated";
      r.fail_after_bytes = 1000;
    }
    return r;
  });
  S3Request req = Get("obj");
  req.range = ByteRange{5000, 60000};
  auto sink = std::make_shared<BufferSink>(60000);
  Result<S3Response> r = exec_->ExecuteSync(req, sink);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(r->status, 206);
  EXPECT_EQ(r->body_bytes, 60000u);
  EXPECT_TRUE(r->body.empty());
  EXPECT_TRUE(sink->in_order);
  EXPECT_EQ(sink->buf, object.substr(5000, 60000));
  auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].Header("Range"), "bytes=5000-64999");
  EXPECT_EQ(reqs[0].Header("If-Match"), "");
  EXPECT_EQ(reqs[1].Header("Range"), "bytes=17345-64999");
  EXPECT_EQ(reqs[1].Header("If-Match"), "\"v1\"");
  EXPECT_EQ(reqs[2].Header("Range"), "bytes=18345-64999");
}

TEST_F(S3ExecutorTest, WholeGetIntoSinkResumesWithRangeAndIfMatch) {
  const std::string object = Pattern(50000);
  std::atomic<int> calls{0};
  fake_.AddResponder("GET", "/b/obj", [&](const RecordedRequest& req) {
    FakeResponse r = FakeHttpTransport::RangedObject(req, object, "\"v1\"");
    if (calls++ == 0) {
      r.error_code = "Reset";
      r.fail_after_bytes = 20000;
    }
    return r;
  });
  auto sink = std::make_shared<BufferSink>(50000);
  Result<S3Response> r = exec_->ExecuteSync(Get("obj"), sink);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->status, 200);  // the first attempt's status and headers
  EXPECT_EQ(sink->buf, object);
  EXPECT_TRUE(sink->in_order);
  auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].Header("Range"), "bytes=20000-");
  EXPECT_EQ(reqs[1].Header("If-Match"), "\"v1\"");
}

TEST_F(S3ExecutorTest, ResumeOfAChangedObjectFails) {
  const std::string object = Pattern(50000);
  std::atomic<int> calls{0};
  fake_.AddResponder("GET", "/b/obj", [&](const RecordedRequest& req) {
    const bool first = calls++ == 0;
    FakeResponse r = FakeHttpTransport::RangedObject(req, object, first ? "\"v1\"" : "\"v2\"");
    if (first) {
      r.error_code = "Reset";
      r.fail_after_bytes = 100;
    }
    return r;
  });
  auto sink = std::make_shared<BufferSink>(50000);
  Result<S3Response> r = exec_->ExecuteSync(Get("obj"), sink);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 412);
  EXPECT_EQ(fake_.request_count(), 2u);
}

TEST_F(S3ExecutorTest, TruncatedForeverIsAnErrorNeverAShortSuccess) {
  FakeResponse r{200, {{"Content-Length", "1000"}}, std::string(1000, 'x')};
  r.error_code = "Truncated";
  r.fail_after_bytes = 0;
  fake_.AddResponse("GET", "/b/k", r);
  Result<S3Response> res = exec_->ExecuteSync(Get("k"));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, "Truncated");
  EXPECT_NE(res.error().message.find("after 4 attempts"), std::string::npos);
}

TEST_F(S3ExecutorTest, CollectedBodyRestartsFromScratch) {
  FakeResponse cut{200, {}, "<ListBucketResult>partial...</ListBucketResult>"};
  cut.error_code = "Reset";
  cut.fail_after_bytes = 10;
  fake_.AddResponse("GET", "/b?list-type=2", cut);
  fake_.AddResponse("GET", "/b?list-type=2", FakeResponse{200, {}, "<ListBucketResult/>"});
  S3Request req = Get("");
  req.query = {{"list-type", "2"}, {"prefix", "a b/c"}};
  Result<S3Response> r = exec_->ExecuteSync(req);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->body, "<ListBucketResult/>");
  auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].Header("Range"), "");
  EXPECT_EQ(reqs[1].url, "http://s3.test:9000/b?list-type=2&prefix=a%20b%2Fc");
}

TEST_F(S3ExecutorTest, WrongContentRangeIsAnErrorNotCorruptData) {
  fake_.AddResponse("GET", "/b/k",
                    FakeResponse{206, {{"Content-Range", "bytes 0-9/100"}}, "0123456789"});
  S3Request req = Get("k");
  req.range = ByteRange{10, 10};
  auto sink = std::make_shared<BufferSink>(10);
  Result<S3Response> r = exec_->ExecuteSync(req, sink);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BadContentRange");
  EXPECT_EQ(sink->next, 0u);
  EXPECT_EQ(fake_.request_count(), 1u);
}

TEST_F(S3ExecutorTest, ResetAfterTheLastAskedByteIsSuccess) {
  fake_.AddResponder("GET", "/b/k", [](const RecordedRequest& req) {
    FakeResponse r = FakeHttpTransport::RangedObject(req, "abcdefghij");
    r.error_code = "Reset";
    r.fail_after_bytes = 4;
    return r;
  });
  S3Request req = Get("k");
  req.range = ByteRange{3, 4};
  Result<S3Response> r = exec_->ExecuteSync(req);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->body, "defg");
  EXPECT_EQ(fake_.request_count(), 1u);
}

TEST_F(S3ExecutorTest, ShortObjectRangeIsAccepted) {
  fake_.AddResponder("GET", "/b/k", [](const RecordedRequest& req) {
    return FakeHttpTransport::RangedObject(req, "abcdef");
  });
  S3Request req = Get("k");
  req.range = ByteRange{2, 100};
  Result<S3Response> r = exec_->ExecuteSync(req);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->body, "cdef");
}

TEST_F(S3ExecutorTest, HtmlAndMalformedErrorBodiesGiveClearErrors) {
  fake_.AddResponse("GET", "/b/html",
                    FakeResponse{403,
                                 {{"Content-Type", "text/html"}},
                                 "<html><head><title>Forbidden by proxy</title></head></html>"});
  fake_.AddResponse("GET", "/b/bad", FakeResponse{400, {}, "<Error><Code>Inval"});
  Result<S3Response> r = exec_->ExecuteSync(Get("html"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EACCES);
  EXPECT_EQ(r.error().http_status, 403);
  r = exec_->ExecuteSync(Get("bad"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 400);
  EXPECT_FALSE(r.error().ToString().empty());
  EXPECT_EQ(fake_.request_count(), 2u);  // 4xx: not retried
}

TEST_F(S3ExecutorTest, NotFoundIsENOENT) {
  fake_.AddResponse("HEAD", "/b/missing", FakeResponse{404, {}, ""});
  fake_.AddResponse("GET", "/b/missing",
                    FakeResponse{404,
                                 {{"x-amz-request-id", "R1"}},
                                 "<Error><Code>NoSuchKey</Code><Message>The specified key does "
                                 "not exist.</Message><RequestId>R1</RequestId></Error>"});
  S3Request head = Get("missing");
  head.method = "HEAD";
  Result<S3Response> r = exec_->ExecuteSync(head);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, ENOENT);
  r = exec_->ExecuteSync(Get("missing"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, ENOENT);
  EXPECT_EQ(r.error().code, "NoSuchKey");
}

TEST_F(S3ExecutorTest, SinkErrorAbortsWithoutRetry) {
  fake_.AddResponse("GET", "/b/k", FakeResponse{200, {}, std::string(100, 'x')});
  auto sink = std::make_shared<BufferSink>(10);  // too small: Write fails
  Result<S3Response> r = exec_->ExecuteSync(Get("k"), sink);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "Overflow");
  EXPECT_EQ(fake_.request_count(), 1u);
}

TEST_F(S3ExecutorTest, KeysAndQueriesAreEncodedOnce) {
  fake_.AddResponse("GET", "/", FakeResponse{200, {}, "ok"});
  S3Request req = Get("dir/a b+c%d?e#f\xc3\xa9");
  req.query = {{"versionId", "x/y=z"}};
  ASSERT_TRUE(exec_->ExecuteSync(req).ok());
  const std::string url = fake_.requests()[0].url;
  EXPECT_EQ(url, "http://s3.test:9000/b/dir/a%20b%2Bc%25d%3Fe%23f%C3%A9?versionId=x%2Fy%3Dz");
}

TEST_F(S3ExecutorTest, AnonymousRequestsAreUnsigned) {
  S3Executor anon(fake_, endpoint_, MakeStaticCredentialsProvider({"", "", "", true}), config_);
  fake_.AddResponse("GET", "/b/k", FakeResponse{200, {}, "x"});
  ASSERT_TRUE(anon.ExecuteSync(Get("k")).ok());
  EXPECT_EQ(fake_.requests()[0].Header("Authorization"), "");
}

TEST_F(S3ExecutorTest, ConcurrentExecuteFromManyThreads) {
  const std::string object = Pattern(4096);
  fake_.AddResponder("GET", "/b/", [&](const RecordedRequest& req) {
    return FakeHttpTransport::RangedObject(req, object);
  });
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        static const char* const kKeys[] = {"o0", "o1", "o2", "o3"};
        S3Request req = Get(kKeys[t]);
        req.range = ByteRange{static_cast<uint64_t>(i), 100};
        auto r = exec_->ExecuteSync(req);
        if (r.ok() && r->body == object.substr(i, 100)) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 200);
}

}  // namespace
}  // namespace bucketfs::s3
