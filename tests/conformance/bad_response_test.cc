// Bad server responses the client must turn into clear errors, never into a
// short or corrupt buffer or a crash: malformed XML, HTML error pages, a body
// cut short, a wrong Content-Length, garbage. A scripted loopback server
// (CannedHttpServer) sends them byte for byte; s3sim's --truncate-rate
// covers truncation against a real server.
#include <gtest/gtest.h>

#include "s3/object_client.h"
#include "tests/conformance/conformance_test.h"
#include "tests/fixtures/canned_http_server.h"
#include "tests/fixtures/s3_server_fixture.h"

namespace bucketfs::conformance {
namespace {

using testing::CannedHttpServer;
using testing::CannedResponse;
using testing::RawResponse;

std::unique_ptr<s3::ObjectClient> ClientFor(const std::string& endpoint, int attempts = 2) {
  s3::ClientConfig c;
  c.endpoint_url = endpoint;
  c.force_path_style = true;
  c.max_attempts = attempts;
  c.backoff_base = std::chrono::milliseconds(1);
  c.backoff_max = std::chrono::milliseconds(5);
  c.low_speed_time = std::chrono::seconds(5);
  c.transport_threads = 1;
  s3::EnvMap env = {{"AWS_ACCESS_KEY_ID", "k"},
                    {"AWS_SECRET_ACCESS_KEY", "s"},
                    {"AWS_CONFIG_FILE", "/dev/null"},
                    {"AWS_SHARED_CREDENTIALS_FILE", "/dev/null"}};
  auto client = s3::MakeS3Client(c, env);
  EXPECT_TRUE(client.ok()) << client.error().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

CannedResponse Always(std::string raw) { return {std::move(raw), true}; }

TEST(BadResponse, MalformedXmlListingIsAnError) {
  CannedHttpServer server([](const std::string&) {
    return Always(RawResponse(200, "OK",
                              {{"Content-Type", "application/xml"}, {"Content-Length", "60"}},
                              "<ListBucketResult><Contents><Key>a</Key><Size>1</Si"
                              "ze></Conte"));
  });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  s3::ListObjectsV2Params p;
  p.bucket = "b";
  auto r = client->ListObjectsV2(p);
  ASSERT_FALSE(r.ok()) << "malformed XML accepted";
  EXPECT_EQ(r.error().errno_value, EIO) << r.error().ToString();
  EXPECT_FALSE(r.error().ToString().empty());
}

TEST(BadResponse, NonXmlSuccessBodyIsAnError) {
  CannedHttpServer server([](const std::string&) {
    return Always(RawResponse(200, "OK", {{"Content-Length", "5"}}, "hello"));
  });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  auto r = client->ListBuckets();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO) << r.error().ToString();
}

TEST(BadResponse, HtmlErrorPageKeepsStatus) {
  const std::string html = "<html><body><h1>403 Forbidden</h1>proxy says no</body></html>";
  CannedHttpServer server([&](const std::string&) {
    return Always(RawResponse(
        403, "Forbidden",
        {{"Content-Type", "text/html"}, {"Content-Length", std::to_string(html.size())}}, html));
  });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> buf(10);
  s3::GetObjectParams p;
  p.bucket = "b";
  p.key = "k";
  auto r = client->GetObject(p, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 403) << r.error().ToString();
  EXPECT_EQ(r.error().errno_value, EACCES) << r.error().ToString();
}

TEST(BadResponse, HtmlBadGatewayIsRetriedThenAnError) {
  const std::string html = "<html><body>502 Bad Gateway</body></html>";
  CannedHttpServer server([&](const std::string&) {
    return Always(RawResponse(
        502, "Bad Gateway",
        {{"Content-Type", "text/html"}, {"Content-Length", std::to_string(html.size())}}, html));
  });
  auto client = ClientFor(server.endpoint(), /*attempts=*/3);
  ASSERT_NE(client, nullptr);
  auto r = client->HeadObject({"b", "k", "", ""});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 502) << r.error().ToString();
  EXPECT_EQ(server.requests(), 3);
}

// 206 for bytes 0-99 whose body stops after 50 bytes (connection closed).
TEST(BadResponse, TruncatedBodyIsAnErrorNotAShortBuffer) {
  CannedHttpServer server([](const std::string&) {
    return Always(RawResponse(
        206, "Partial Content",
        {{"Content-Range", "bytes 0-99/100"}, {"Content-Length", "100"}, {"ETag", "\"e\""}},
        std::string(50, 'x')));
  });
  auto client = ClientFor(server.endpoint(), /*attempts=*/3);
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> buf(100);
  s3::GetObjectParams p;
  p.bucket = "b";
  p.key = "k";
  p.offset = 0;
  p.length = 100;
  auto r = client->GetObject(p, buf);
  ASSERT_FALSE(r.ok()) << "got " << r->bytes << " bytes from a truncated body";
  EXPECT_EQ(r.error().errno_value, EIO) << r.error().ToString();
  EXPECT_GE(server.requests(), 2) << "a cut body should be retried (resumed)";
}

// Content-Length says 200 for a 100-byte range; 200 bytes follow.
TEST(BadResponse, LongerContentLengthThanRangeIsAnError) {
  CannedHttpServer server([](const std::string&) {
    return Always(RawResponse(206, "Partial Content",
                              {{"Content-Range", "bytes 0-99/1000"}, {"Content-Length", "200"}},
                              std::string(200, 'y')));
  });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> buf(100 + 16, std::byte{0x5a});  // guard bytes after the range
  s3::GetObjectParams p;
  p.bucket = "b";
  p.key = "k";
  p.offset = 0;
  p.length = 100;
  auto r = client->GetObject(p, std::span<std::byte>(buf.data(), 100));
  EXPECT_FALSE(r.ok()) << "oversized body accepted";
  for (size_t i = 100; i < buf.size(); ++i) ASSERT_EQ(buf[i], std::byte{0x5a}) << "overflow";
}

// Content-Length (and body) shorter than the range asked for.
TEST(BadResponse, ShorterContentLengthThanRangeIsAnError) {
  CannedHttpServer server([](const std::string&) {
    return Always(RawResponse(206, "Partial Content",
                              {{"Content-Range", "bytes 0-49/1000"}, {"Content-Length", "50"}},
                              std::string(50, 'z')));
  });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> buf(100);
  s3::GetObjectParams p;
  p.bucket = "b";
  p.key = "k";
  p.offset = 0;
  p.length = 100;
  auto r = client->GetObject(p, buf);
  EXPECT_FALSE(r.ok()) << "short range accepted as " << r->bytes << " bytes";
}

// A whole-object GET whose Content-Length exceeds the caller's buffer.
TEST(BadResponse, WholeObjectLargerThanBufferIsAnError) {
  CannedHttpServer server([](const std::string&) {
    return Always(RawResponse(200, "OK", {{"Content-Length", "64"}}, std::string(64, 'w')));
  });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> buf(32 + 8, std::byte{0x5a});
  s3::GetObjectParams p;
  p.bucket = "b";
  p.key = "k";
  auto r = client->GetObject(p, std::span<std::byte>(buf.data(), 32));
  EXPECT_FALSE(r.ok());
  for (size_t i = 32; i < buf.size(); ++i) ASSERT_EQ(buf[i], std::byte{0x5a}) << "overflow";
}

TEST(BadResponse, GarbageInsteadOfHttpIsAnError) {
  CannedHttpServer server([](const std::string&) { return Always("this is not HTTP\r\n\r\n"); });
  auto client = ClientFor(server.endpoint());
  ASSERT_NE(client, nullptr);
  auto r = client->HeadObject({"b", "k", "", ""});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().errno_value, 0) << r.error().ToString();
  EXPECT_EQ(r.error().http_status, 0) << r.error().ToString();
}

// Against s3sim: every GET body is cut short; the retries meet the same
// fault, so the caller must get an error, never a short buffer.
TEST(BadResponse, S3simTruncatedBodiesGiveAnError) {
  auto server = testing::S3ServerEnvironment::Get().Server(
      "s3sim", {"--truncate-rate", "1", "--fault-ops", "GET"});
  BUCKETFS_REQUIRE_SERVER(server);
  auto made = (*server)->MakeClient();
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  auto& client = **made;
  std::string bucket = testing::UniqueBucketName("truncate");
  ASSERT_TRUE(client.CreateBucket({bucket}).ok());
  auto data = RandomBytes(256 << 10, 30);
  auto put = client.PutObject({bucket, "obj", "", s3::BodyChecksum::kMd5, ""}, data);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  std::vector<std::byte> buf(data.size());
  s3::GetObjectParams p;
  p.bucket = bucket;
  p.key = "obj";
  p.offset = 0;
  p.length = data.size();
  auto r = client.GetObject(p, buf);
  ASSERT_FALSE(r.ok()) << "a body truncated on every attempt was accepted";
  EXPECT_EQ(r.error().errno_value, EIO) << r.error().ToString();
}

}  // namespace
}  // namespace bucketfs::conformance
