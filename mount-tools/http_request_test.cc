#include "mount-tools/http_request.h"

#include <gtest/gtest.h>

#include "mount-tools/host_port.h"

namespace bucketfs::tools {
namespace {

TEST(HttpRequest, ParsesTheRequestLineAndDropsTheQuery) {
  auto r = ParseRequestLine("GET /metrics?name[]=x HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/metrics");
}

TEST(HttpRequest, RefusesMalformedLines) {
  for (const char* bad :
       {"", "GET /metrics HTTP/1.1", "GET  /metrics HTTP/1.1\r\n", "GET /metrics\r\n",
        "GET metrics HTTP/1.1\r\n", "GET /metrics SPDY/3\r\n", "GET /a b HTTP/1.1\r\n"}) {
    EXPECT_FALSE(ParseRequestLine(bad).ok()) << bad;
  }
}

TEST(HttpRequest, AnswersMetrics404And405) {
  auto render = [] { return std::string("x 1\n"); };
  const std::string ok = AnswerMetricsRequest("GET /metrics HTTP/1.1\r\n\r\n", render);
  EXPECT_TRUE(ok.starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(ok.find("Content-Length: 4\r\n"), std::string::npos);
  EXPECT_TRUE(ok.ends_with("\r\n\r\nx 1\n"));
  const std::string head = AnswerMetricsRequest("HEAD /metrics HTTP/1.0\r\n\r\n", render);
  EXPECT_TRUE(head.ends_with("Connection: close\r\n\r\n"));
  EXPECT_TRUE(AnswerMetricsRequest("GET / HTTP/1.1\r\n\r\n", render).starts_with("HTTP/1.1 404"));
  EXPECT_TRUE(
      AnswerMetricsRequest("POST /metrics HTTP/1.1\r\n\r\n", render).starts_with("HTTP/1.1 405"));
  EXPECT_TRUE(AnswerMetricsRequest("hello\r\n\r\n", render).starts_with("HTTP/1.1 400"));
}

TEST(HostPort, Parses) {
  auto a = ParseHostPort("127.0.0.1:9477");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9477);
  auto b = ParseHostPort("[::1]:80");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 80);
  EXPECT_TRUE(ParseHostPort("localhost:65535").ok());
}

TEST(HostPort, RefusesWithAReason) {
  for (const char* bad : {"9477", ":9477", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                          "127.0.0.1:http", "::1:9477", "[::1]9477", "[::1"}) {
    auto r = ParseHostPort(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("is not HOST:PORT"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace bucketfs::tools
