// Loopback tests of the real libcurl transport against a tiny HTTP/1.1
// server running in the test process (one thread per connection, canned
// answers chosen by path, accepts counted to observe connection reuse).
#include "s3/curl_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "s3/s3_executor.h"

namespace bucketfs::s3 {
namespace {

using namespace std::chrono_literals;

char PatternByte(size_t i) { return static_cast<char>('A' + (i * 13 + i / 4093) % 26); }

// The object /b/flaky serves, built before the server starts: byte by byte
// per request it took seconds under TSan on a loaded machine, a silence the
// client's 1 s stall limit took for a stall (CurlTransportTest.Executor...).
const std::string& FlakyObject() {
  static const std::string object = [] {
    std::string o(1000000, '\0');
    for (size_t i = 0; i < o.size(); ++i) o[i] = PatternByte(i);
    return o;
  }();
  return object;
}

struct Req {
  std::string method, path, body;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "-" : it->second;
  }
};

class LoopbackServer {
 public:
  LoopbackServer() {
    FlakyObject();
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(listen_fd_, 128);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~LoopbackServer() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    acceptor_.join();
    MutexLock lock(mu_);
    for (int fd : conns_) shutdown(fd, SHUT_RDWR);
    for (auto& t : threads_) t.join();
    for (int fd : conns_) close(fd);
  }

  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int accepts() const { return accepts_.load(); }
  int port() const { return port_; }

 private:
  void AcceptLoop() {
    for (;;) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      if (stop_) {
        close(fd);
        return;
      }
      ++accepts_;
      MutexLock lock(mu_);
      conns_.push_back(fd);
      threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  static bool SendAll(int fd, std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  void Serve(int fd) {
    std::string in;
    char buf[65536];
    for (;;) {
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      if (end == std::string::npos) break;
      const std::string head = in.substr(0, end + 2);
      in.erase(0, end + 4);
      const std::string method = head.substr(0, head.find(' '));
      const size_t p0 = head.find(' ') + 1;
      const std::string path = head.substr(p0, head.find(' ', p0) - p0);
      Req req;
      req.method = method;
      req.path = path;
      size_t content_length = 0;
      for (size_t pos = head.find("\r\n") + 2; pos < head.size();) {
        const size_t eol = head.find("\r\n", pos);
        const std::string line = head.substr(pos, eol - pos);
        pos = eol + 2;
        const size_t colon = line.find(':');
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(tolower(c));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (name == "content-length") content_length = std::stoul(value);
        req.headers[name] = value;
      }
      while (in.size() < content_length) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      if (in.size() < content_length) break;
      req.body = in.substr(0, content_length);
      in.erase(0, content_length);
      if (!Respond(fd, req)) break;
    }
    shutdown(fd, SHUT_RDWR);  // closed in the destructor
  }

  static std::string Ok(std::string_view body, std::string_view extra = "") {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
           std::string(extra) + "\r\n" + std::string(body);
  }

  // False closes the connection.
  bool Respond(int fd, const Req& req) {
    const std::string& path = req.path;
    if (path == "/hello") return SendAll(fd, Ok("hello world", "X-Test: a b \r\n"));
    if (path.starts_with("/bytes/")) {
      size_t n = 0;
      std::from_chars(path.data() + 7, path.data() + path.size(), n);
      std::string data(n, '\0');
      for (size_t i = 0; i < n; ++i) data[i] = PatternByte(i);
      return SendAll(fd, Ok(data));
    }
    if (path == "/head") {
      return SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nETag: \"h\"\r\n\r\n");
    }
    if (path == "/echo") {
      return SendAll(fd, Ok(req.method + " " + std::to_string(req.body.size()) + " " +
                            std::to_string(std::hash<std::string>()(req.body)) + " ct=" +
                            req.Header("content-type") + " expect=" + req.Header("expect")));
    }
    if (path == "/status/503") {
      return SendAll(fd,
                     "HTTP/1.1 503 Slow Down\r\nContent-Length: 36\r\n\r\n"
                     "<Error><Code>SlowDown</Code></Error>");
    }
    if (path == "/short") {
      SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(50, 's'));
      return false;
    }
    if (path == "/stall") {
      SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(10, 's'));
      for (int i = 0; i < 100 && !stop_; ++i) std::this_thread::sleep_for(50ms);
      return false;
    }
    if (path == "/burst-stall") {  // 4 MB fast, then nothing for up to 10 s
      SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 8000000\r\n\r\n" + std::string(4000000, 'b'));
      for (int i = 0; i < 200 && !stop_; ++i) std::this_thread::sleep_for(50ms);
      return false;
    }
    if (path == "/long") {  // more bytes than Content-Length, then keep-alive
      return SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA");
    }
    if (path == "/b/flaky") return Flaky(fd, req);
    return SendAll(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  }

  // A 1 MB object with ETag "f1" honouring "Range: bytes=a-b" / "bytes=a-".
  // The first request gets the full Content-Length but only 300000 bytes
  // before the connection closes; the second one stalls after 1000 bytes.
  bool Flaky(int fd, const Req& req) {
    const size_t kSize = FlakyObject().size();
    const int n = flaky_calls_++;
    if (req.Header("if-match") != "-" && req.Header("if-match") != "\"f1\"") {
      return SendAll(fd, "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n");
    }
    size_t first = 0, last = kSize - 1;
    const std::string range = req.Header("range");
    std::string status = "200 OK", extra;
    if (range.starts_with("bytes=")) {
      const size_t dash = range.find('-');
      first = std::stoul(range.substr(6, dash - 6));
      if (dash + 1 < range.size()) last = std::min(last, std::stoul(range.substr(dash + 1)));
      status = "206 Partial Content";
      extra = "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
              std::to_string(kSize) + "\r\n";
    }
    const std::string data = FlakyObject().substr(first, last - first + 1);
    std::string head = "HTTP/1.1 " + status + "\r\nETag: \"f1\"\r\n" + extra +
                       "Content-Length: " + std::to_string(data.size()) + "\r\n\r\n";
    if (n == 0) {
      SendAll(fd, head + data.substr(0, 300000));
      return false;
    }
    if (n == 1) {
      SendAll(fd, head + data.substr(0, 1000));
      for (int i = 0; i < 100 && !stop_; ++i) std::this_thread::sleep_for(50ms);
      return false;
    }
    return SendAll(fd, head + data);
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepts_{0};
  std::atomic<int> flaky_calls_{0};
  std::thread acceptor_;
  Mutex mu_;
  std::vector<int> conns_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

// Records one response and checks the callback order.
class Collector : public HttpResponseHandler {
 public:
  void OnHeaders(int s, const HttpHeaders& h) override {
    if (headers_calls++ > 0 || !body.empty()) order_ok = false;
    status = s;
    headers = h;
  }
  bool OnBody(std::span<const std::byte> c) override {
    if (headers_calls != 1) order_ok = false;
    body.append(reinterpret_cast<const char*>(c.data()), c.size());
    got_body = true;
    return !refuse_body;
  }
  void OnComplete(Status s) override { done.set_value(std::move(s)); }

  int status = 0;
  int headers_calls = 0;
  bool order_ok = true;
  bool refuse_body = false;
  std::atomic<bool> got_body{false};  // polled by the test thread
  HttpHeaders headers;
  std::string body;
  std::promise<Status> done;
};

class CurlTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = MakeCurlTransport({.threads = 2, .max_connections = 8});
    ASSERT_TRUE(t.ok()) << t.error().ToString();
    transport_ = std::move(t.value());
  }

  std::shared_ptr<Collector> Send(HttpRequest req, std::chrono::milliseconds delay = 0ms) {
    auto c = std::make_shared<Collector>();
    transport_->Submit(std::move(req), c, delay);
    return c;
  }
  Status Wait(const std::shared_ptr<Collector>& c) { return c->done.get_future().get(); }

  HttpRequest Get(const std::string& path) {
    HttpRequest r;
    r.method = "GET";
    r.url = server_.Url(path);
    return r;
  }

  LoopbackServer server_;
  std::unique_ptr<HttpTransport> transport_;
};

TEST_F(CurlTransportTest, SequentialRequestsReuseOneConnection) {
  for (int i = 0; i < 10; ++i) {
    auto c = Send(Get("/hello"));
    Status s = Wait(c);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    EXPECT_EQ(c->status, 200);
    EXPECT_EQ(c->body, "hello world");
    EXPECT_TRUE(c->order_ok);
    ASSERT_NE(FindHeader(c->headers, "x-test"), nullptr);
    EXPECT_EQ(*FindHeader(c->headers, "x-test"), "a b");
  }
  EXPECT_EQ(server_.accepts(), 1);
}

TEST_F(CurlTransportTest, BodyShorterThanContentLengthIsTruncated) {
  auto c = Send(Get("/short"));
  Status s = Wait(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "Truncated");
  EXPECT_TRUE(s.error().retryable);
  EXPECT_EQ(s.error().errno_value, EIO);
}

TEST_F(CurlTransportTest, BytesPastContentLengthAreNotDeliveredNorReused) {
  auto c = Send(Get("/long"));
  ASSERT_TRUE(Wait(c).ok());
  EXPECT_EQ(c->body, "hello");
  // The excess must not be read as the next response on that connection.
  auto next = Send(Get("/hello"));
  ASSERT_TRUE(Wait(next).ok());
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "hello world");
}

TEST_F(CurlTransportTest, StalledBodyIsStalledWithinLowSpeedTime) {
  HttpRequest r = Get("/stall");
  r.low_speed_time = 1s;
  r.low_speed_bytes_per_sec = 100;
  const auto start = std::chrono::steady_clock::now();
  auto c = Send(std::move(r));
  Status s = Wait(c);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "Stalled");
  EXPECT_EQ(s.error().errno_value, ETIMEDOUT);
  EXPECT_LT(elapsed, 4s);
  EXPECT_EQ(c->body.size(), 10u);
}

// curl's own limit averages the speed over five seconds: after a fast start
// it would wait that long before it even begins to count low_speed_time.
TEST_F(CurlTransportTest, BodyStoppingAfterAFastStartIsStalledWithinLowSpeedTime) {
  for (const bool on_caller : {false, true}) {
    HttpRequest r = Get("/burst-stall");
    r.low_speed_time = 1s;
    r.run_on_caller = on_caller;
    const auto start = std::chrono::steady_clock::now();
    auto c = Send(std::move(r));
    Status s = Wait(c);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, "Stalled") << s.error().ToString();
    EXPECT_EQ(s.error().errno_value, ETIMEDOUT);
    EXPECT_TRUE(s.error().retryable);
    EXPECT_GE(elapsed, 1s);
    EXPECT_LT(elapsed, 3500ms) << "on_caller " << on_caller;
    EXPECT_EQ(c->body.size(), 4000000u);
  }
}

TEST_F(CurlTransportTest, ManyConcurrentRequestsComplete) {
  constexpr int kRequests = 200;
  constexpr size_t kSize = 200000;
  std::vector<std::shared_ptr<Collector>> cs;
  for (int i = 0; i < kRequests; ++i) cs.push_back(Send(Get("/bytes/" + std::to_string(kSize))));
  int good = 0;
  for (auto& c : cs) {
    Status s = Wait(c);
    if (!s.ok() || c->body.size() != kSize) continue;
    bool same = true;
    for (size_t i = 0; i < kSize && same; i += 997) same = c->body[i] == PatternByte(i);
    good += same;
  }
  EXPECT_EQ(good, kRequests);
  EXPECT_LE(server_.accepts(), 8);  // max_connections across both threads
}

TEST_F(CurlTransportTest, SubmitsWakeAnIdleWorkerWithoutWaitingForItsPoll) {
  // A worker is only woken when it sleeps in curl_multi_poll; a Submit that
  // missed it would wait out the poll's timeout. Here that timeout is an
  // hour, so a missed wakeup leaves its request hanging, far past the bound
  // below on any machine, where a loopback request takes milliseconds even
  // under a sanitizer on a loaded machine. Requests sent one after another
  // (each worker idle in between) and in bursts from several threads
  // (workers busy or about to poll) must all finish.
  auto made = MakeCurlTransport({.threads = 2, .max_connections = 8, .idle_poll_timeout = 1h});
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  transport_ = std::move(made.value());
  constexpr auto kBound = 30s;
  // Ok when the request completed within kBound.
  auto finishes = [&](const std::shared_ptr<Collector>& c) {
    auto f = c->done.get_future();
    return f.wait_for(kBound) == std::future_status::ready && f.get().ok();
  };
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(finishes(Send(Get("/hello")))) << "request " << i;
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        std::vector<std::shared_ptr<Collector>> burst;
        for (int j = 0; j < 1 + i % 4; ++j) burst.push_back(Send(Get("/hello")));
        for (auto& c : burst) {
          if (!finishes(c)) return;  // one stuck request is enough: stop here
          ++good;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  int sent = 0;
  for (int i = 0; i < 50; ++i) sent += 1 + i % 4;
  EXPECT_EQ(good.load(), 4 * sent);
}

TEST_F(CurlTransportTest, PutAndPostSendTheirBodies) {
  std::string data(300000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = PatternByte(i);
  const std::string expected_hash = std::to_string(std::hash<std::string>()(data));
  for (const char* method : {"PUT", "POST"}) {
    HttpRequest r = Get("/echo");
    r.method = method;
    r.body = {reinterpret_cast<const std::byte*>(data.data()), data.size()};
    auto c = Send(std::move(r));
    Status s = Wait(c);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    EXPECT_EQ(c->body, std::string(method) + " 300000 " + expected_hash + " ct=- expect=-");
  }
  HttpRequest del = Get("/echo");
  del.method = "DELETE";
  auto c = Send(std::move(del));
  ASSERT_TRUE(Wait(c).ok());
  EXPECT_EQ(c->body.substr(0, 9), "DELETE 0 ");
}

TEST_F(CurlTransportTest, HeadHasHeadersAndNoBody) {
  HttpRequest r = Get("/head");
  r.method = "HEAD";
  auto c = Send(std::move(r));
  ASSERT_TRUE(Wait(c).ok());
  EXPECT_EQ(c->status, 200);
  EXPECT_EQ(c->headers_calls, 1);
  EXPECT_EQ(*FindHeader(c->headers, "content-length"), "1234");
  EXPECT_TRUE(c->body.empty());
}

TEST_F(CurlTransportTest, ErrorStatusIsAResponseNotATransportError) {
  auto c = Send(Get("/status/503"));
  ASSERT_TRUE(Wait(c).ok());
  EXPECT_EQ(c->status, 503);
  EXPECT_EQ(c->body, "<Error><Code>SlowDown</Code></Error>");
}

TEST_F(CurlTransportTest, RefusedConnectionIsConnectFailed) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);  // nothing listens there now
  HttpRequest r;
  r.method = "GET";
  r.url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/x";
  Status s = Wait(Send(std::move(r)));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "ConnectFailed");
  EXPECT_TRUE(s.error().retryable);
}

TEST_F(CurlTransportTest, HandlerAbortIsAborted) {
  auto c = std::make_shared<Collector>();
  c->refuse_body = true;
  transport_->Submit(Get("/bytes/1000"), c, 0ms);
  Status s = Wait(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "Aborted");
  EXPECT_FALSE(s.error().retryable);
}

// Notes the thread each callback ran on, and whether Submit had returned.
class ThreadCollector : public Collector {
 public:
  void OnHeaders(int s, const HttpHeaders& h) override {
    threads.push_back(std::this_thread::get_id());
    Collector::OnHeaders(s, h);
  }
  void OnComplete(Status s) override {
    threads.push_back(std::this_thread::get_id());
    completed_inside_submit = !submit_returned.load();
    Collector::OnComplete(std::move(s));
  }
  std::vector<std::thread::id> threads;
  std::atomic<bool> submit_returned{false};
  bool completed_inside_submit = false;
};

TEST_F(CurlTransportTest, RunOnCallerRunsTheTransferInsideSubmitOnItsOwnConnection) {
  for (int i = 0; i < 3; ++i) {
    auto c = std::make_shared<ThreadCollector>();
    HttpRequest r = Get("/hello");
    r.run_on_caller = true;
    transport_->Submit(std::move(r), c, 0ms);
    c->submit_returned = true;
    Status s = Wait(c);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    EXPECT_EQ(c->body, "hello world");
    EXPECT_TRUE(c->order_ok);
    EXPECT_TRUE(c->completed_inside_submit);
    ASSERT_EQ(c->threads.size(), 2u);
    EXPECT_EQ(c->threads[0], std::this_thread::get_id());
    EXPECT_EQ(c->threads[1], std::this_thread::get_id());
  }
  // Without the mark: a transport thread, its own connection.
  auto c = std::make_shared<ThreadCollector>();
  transport_->Submit(Get("/hello"), c, 0ms);
  c->submit_returned = true;
  ASSERT_TRUE(Wait(c).ok());
  ASSERT_EQ(c->threads.size(), 2u);
  EXPECT_NE(c->threads[1], std::this_thread::get_id());
  // The caller's connection was kept across its three requests.
  EXPECT_EQ(server_.accepts(), 2);
}

TEST_F(CurlTransportTest, RunOnCallerWithADelayGoesToATransportThread) {
  auto c = std::make_shared<ThreadCollector>();
  HttpRequest r = Get("/hello");
  r.run_on_caller = true;
  transport_->Submit(std::move(r), c, 1ms);
  c->submit_returned = true;
  ASSERT_TRUE(Wait(c).ok());
  EXPECT_FALSE(c->completed_inside_submit);
  ASSERT_EQ(c->threads.size(), 2u);
  EXPECT_NE(c->threads[1], std::this_thread::get_id());
}

TEST_F(CurlTransportTest, RunOnCallerReportsErrorsLikeATransportThread) {
  auto c = std::make_shared<Collector>();
  c->refuse_body = true;
  HttpRequest r = Get("/bytes/1000");
  r.run_on_caller = true;
  transport_->Submit(std::move(r), c, 0ms);
  Status s = Wait(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "Aborted");
  // The thread's handle is usable again after a failed transfer.
  auto next = std::make_shared<Collector>();
  HttpRequest again = Get("/hello");
  again.run_on_caller = true;
  transport_->Submit(std::move(again), next, 0ms);
  ASSERT_TRUE(Wait(next).ok());
  EXPECT_EQ(next->body, "hello world");
}

TEST_F(CurlTransportTest, DelayedSubmitWaits) {
  // The immediate request is not held behind the delayed one. The delay is
  // long so that a loaded machine cannot blur the two (at 300 ms, with the
  // check at 250 ms, one run at load 15 took 311 ms).
  const auto start = std::chrono::steady_clock::now();
  auto late = Send(Get("/hello"), 1500ms);
  auto now = Send(Get("/hello"));
  ASSERT_TRUE(Wait(now).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  ASSERT_TRUE(Wait(late).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1500ms);
}

TEST_F(CurlTransportTest, DestructionCompletesPendingWithShutdown) {
  auto delayed = Send(Get("/hello"), 60s);
  auto in_flight = Send(Get("/stall"));
  while (!in_flight->got_body) std::this_thread::sleep_for(5ms);  // body started
  transport_.reset();
  for (auto& c : {delayed, in_flight}) {
    Status s = Wait(c);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, "Shutdown");
  }
}

// The executor over the real transport: a connection cut mid-body and a
// stalled body are both resumed, and the caller gets exactly the object.
TEST_F(CurlTransportTest, ExecutorResumesRealTruncationAndStall) {
  Endpoint ep;
  ep.scheme = "http";
  ep.host = "127.0.0.1";
  ep.port = server_.port();
  ep.path_style = true;
  ClientConfig config;
  config.backoff_base = 1ms;
  config.backoff_max = 5ms;
  config.low_speed_time = 1s;
  config.low_speed_bytes_per_sec = 1000;
  S3Executor exec(*transport_, ep, nullptr, config);
  class Sink : public BodySink {
   public:
    Status Write(uint64_t offset, std::span<const std::byte> d) override {
      if (offset != data.size()) return MakeError(EIO, "OutOfOrder", "gap or overlap");
      data.append(reinterpret_cast<const char*>(d.data()), d.size());
      return Status::Ok();
    }
    std::string data;
  };
  auto sink = std::make_shared<Sink>();
  S3Request req{.method = "GET", .bucket = "b", .key = "flaky"};
  Result<S3Response> r = exec.ExecuteSync(req, sink);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->attempts, 3);
  ASSERT_EQ(sink->data.size(), 1000000u);
  bool same = true;
  for (size_t i = 0; i < sink->data.size() && same; ++i) same = sink->data[i] == PatternByte(i);
  EXPECT_TRUE(same);
}

TEST(CurlTransportConfig, UnreadableCaBundleIsAnError) {
  auto t = MakeCurlTransport({.ca_bundle = "/nonexistent/ca.pem"});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("CA bundle"), std::string::npos);
}

}  // namespace
}  // namespace bucketfs::s3
