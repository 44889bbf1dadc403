#include "s3/fake_http_transport.h"

#include <gtest/gtest.h>

#include <future>

namespace bucketfs::s3 {
namespace {

// Collects one response; done() is fulfilled by OnComplete.
class Collector : public HttpResponseHandler {
 public:
  void OnHeaders(int s, const HttpHeaders& h) override {
    status = s;
    headers = h;
  }
  bool OnBody(std::span<const std::byte> c) override {
    body.append(reinterpret_cast<const char*>(c.data()), c.size());
    ++chunks;
    return true;
  }
  void OnComplete(Status s) override { done.set_value(std::move(s)); }

  int status = 0;
  int chunks = 0;
  HttpHeaders headers;
  std::string body;
  std::promise<Status> done;
};

Status Fetch(FakeHttpTransport& t, std::string method, std::string url,
             std::shared_ptr<Collector>& out, HttpHeaders headers = {}) {
  out = std::make_shared<Collector>();
  HttpRequest req;
  req.method = std::move(method);
  req.url = std::move(url);
  req.headers = std::move(headers);
  auto f = out->done.get_future();
  t.Submit(std::move(req), out, std::chrono::milliseconds(0));
  return f.get();
}

TEST(FakeHttpTransport, ScriptedSequenceLastSticks) {
  FakeHttpTransport t;
  t.AddResponse("GET", "/b/k", FakeResponse{503});
  t.AddResponse("GET", "/b/k", FakeResponse{200, {}, "hello"});
  std::shared_ptr<Collector> c;
  ASSERT_TRUE(Fetch(t, "GET", "http://h:1/b/k", c).ok());
  EXPECT_EQ(c->status, 503);
  ASSERT_TRUE(Fetch(t, "GET", "http://h:1/b/k", c).ok());
  EXPECT_EQ(c->status, 200);
  EXPECT_EQ(c->body, "hello");
  EXPECT_EQ(*FindHeader(c->headers, "content-length"), "5");
  ASSERT_TRUE(Fetch(t, "GET", "http://h:1/b/k", c).ok());
  EXPECT_EQ(c->status, 200);
  EXPECT_EQ(t.request_count(), 3u);
}

TEST(FakeHttpTransport, LongestTargetWinsAndUnmatchedIs501) {
  FakeHttpTransport t({.inline_mode = true});
  t.AddResponse("GET", "/b/", FakeResponse{200, {}, "list"});
  t.AddResponse("GET", "/b/key", FakeResponse{200, {}, "object"});
  std::shared_ptr<Collector> c;
  ASSERT_TRUE(Fetch(t, "GET", "https://h/b/key", c).ok());
  EXPECT_EQ(c->body, "object");
  ASSERT_TRUE(Fetch(t, "GET", "https://h/b/?list-type=2", c).ok());
  EXPECT_EQ(c->body, "list");
  ASSERT_TRUE(Fetch(t, "PUT", "https://h/b/key", c).ok());
  EXPECT_EQ(c->status, 501);
}

TEST(FakeHttpTransport, MidBodyFailureAfterNBytes) {
  FakeHttpTransport t({.chunk_size = 3});
  FakeResponse r{200, {}, "0123456789"};
  r.error_code = "Reset";
  r.fail_after_bytes = 4;
  t.AddResponse("GET", "/b/k", r);
  std::shared_ptr<Collector> c;
  Status s = Fetch(t, "GET", "http://h/b/k", c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "Reset");
  EXPECT_TRUE(s.error().retryable);
  EXPECT_EQ(c->body, "0123");
  EXPECT_EQ(c->chunks, 2);
}

TEST(FakeHttpTransport, FailureBeforeHeaders) {
  FakeHttpTransport t;
  FakeResponse r;
  r.error_code = "ConnectFailed";
  t.AddResponse("GET", "/", r);
  std::shared_ptr<Collector> c;
  Status s = Fetch(t, "GET", "http://h/b/k", c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "ConnectFailed");
  EXPECT_EQ(c->status, 0);
}

TEST(FakeHttpTransport, RangedObjectResponder) {
  FakeHttpTransport t;
  t.AddResponder("GET", "/b/k", [](const RecordedRequest& r) {
    return FakeHttpTransport::RangedObject(r, "abcdefghij", "\"e1\"");
  });
  std::shared_ptr<Collector> c;
  ASSERT_TRUE(Fetch(t, "GET", "http://h/b/k", c, {{"Range", "bytes=2-4"}}).ok());
  EXPECT_EQ(c->status, 206);
  EXPECT_EQ(c->body, "cde");
  EXPECT_EQ(*FindHeader(c->headers, "Content-Range"), "bytes 2-4/10");
  ASSERT_TRUE(Fetch(t, "GET", "http://h/b/k", c, {{"Range", "bytes=7-"}}).ok());
  EXPECT_EQ(c->body, "hij");
  ASSERT_TRUE(Fetch(t, "GET", "http://h/b/k", c, {{"Range", "bytes=10-12"}}).ok());
  EXPECT_EQ(c->status, 416);
  ASSERT_TRUE(Fetch(t, "GET", "http://h/b/k", c, {{"If-Match", "\"other\""}}).ok());
  EXPECT_EQ(c->status, 412);
  auto reqs = t.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].Header("range"), "bytes=2-4");
}

TEST(FakeHttpTransport, AbortFromHandler) {
  class Refuser : public Collector {
    bool OnBody(std::span<const std::byte>) override { return false; }
  };
  FakeHttpTransport t;
  t.AddResponse("GET", "/", FakeResponse{200, {}, "data"});
  auto h = std::make_shared<Refuser>();
  auto f = h->done.get_future();
  t.Submit(HttpRequest{"GET", "http://h/x"}, h, std::chrono::milliseconds(5));
  Status s = f.get();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "Aborted");
  EXPECT_FALSE(s.error().retryable);
  EXPECT_EQ(t.requests()[0].delay, std::chrono::milliseconds(5));
}

}  // namespace
}  // namespace bucketfs::s3
