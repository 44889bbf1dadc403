// x-amz-checksum-crc32c on PutObject and UploadPart, through the handlers:
// a wrong sum is 400 BadDigest and stores nothing, a malformed one is 400
// InvalidRequest, a right one is stored and echoed.
#include <gtest/gtest.h>

#include "tests/s3sim/crc32c.h"
#include "tests/s3sim/handlers.h"
#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

TEST(Crc32c, KnownValues) {
  // The CRC-32C check value (RFC 3720 B.4 / the Castagnoli catalogue entry).
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);    // RFC 3720 B.4
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);  // RFC 3720 B.4
  EXPECT_EQ(Crc32cBase64("123456789"), "4waSgw==");
  EXPECT_EQ(Crc32cBase64(""), "AAAAAA==");
  // Every length around the 8-byte stride agrees with byte-at-a-time sums.
  std::string s;
  for (int i = 0; i < 40; ++i) s.push_back(static_cast<char>(i * 37 + 11));
  for (size_t n = 0; n <= s.size(); ++n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
      c ^= static_cast<unsigned char>(s[i]);
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    EXPECT_EQ(Crc32c(std::string_view(s).substr(0, n)), c ^ 0xFFFFFFFFu) << n;
  }
}

std::string ErrorCode(const HttpResponse& resp) {
  size_t a = resp.body.find("<Code>"), b = resp.body.find("</Code>");
  if (a == std::string::npos || b == std::string::npos) return "";
  return resp.body.substr(a + 6, b - a - 6);
}

const std::string* RespHeader(const HttpResponse& resp, std::string_view name) {
  for (const auto& [k, v] : resp.headers) {
    if (ToLower(k) == name) return &v;
  }
  return nullptr;
}

class ChecksumTest : public ::testing::Test {
 protected:
  ChecksumTest() : store_(4) { store_.CreateBucket("b"); }

  // A request for bucket "b" key "k" with `body` and, unless empty, `crc32c`.
  S3Request Req(const std::string& body, const std::string& crc32c) {
    http_ = HttpRequest{};
    http_.method = "PUT";
    http_.body = body;
    if (!crc32c.empty()) http_.headers.emplace_back("x-amz-checksum-crc32c", crc32c);
    S3Request r;
    r.http = &http_;
    r.bucket = "b";
    r.key = "k";
    r.request_id = "req";
    return r;
  }

  HttpResponse Part(const std::string& upload_id, const std::string& body,
                    const std::string& crc32c) {
    S3Request r = Req(body, crc32c);
    r.query = {{"partNumber", "1"}, {"uploadId", upload_id}};
    return HandleUploadPart(store_, r);
  }

  Store store_;
  HttpRequest http_;
};

TEST_F(ChecksumTest, PutObjectWrongCrc32cIsBadDigestAndStoresNothing) {
  S3Request r = Req("hello", Crc32cBase64("hellO"));
  HttpResponse resp = HandlePutObject(store_, r);
  EXPECT_EQ(resp.status, 400);
  EXPECT_EQ(ErrorCode(resp), "BadDigest");
  EXPECT_NE(resp.body.find("The CRC32C you specified did not match the calculated checksum."),
            std::string::npos);
  EXPECT_EQ(store_.Get("b", "k").error().code, "NoSuchKey");
}

TEST_F(ChecksumTest, PutObjectMalformedCrc32cIsInvalidRequest) {
  for (const std::string bad : {"not base64!", "AAAA", "AAAAAAAA", "4waSgw=x"}) {
    S3Request r = Req("123456789", bad);
    HttpResponse resp = HandlePutObject(store_, r);
    EXPECT_EQ(resp.status, 400) << bad;
    EXPECT_EQ(ErrorCode(resp), "InvalidRequest") << bad;
    EXPECT_EQ(store_.Get("b", "k").error().code, "NoSuchKey") << bad;
  }
}

TEST_F(ChecksumTest, PutObjectRightCrc32cIsStoredAndEchoed) {
  S3Request r = Req("123456789", "4waSgw==");
  HttpResponse resp = HandlePutObject(store_, r);
  ASSERT_EQ(resp.status, 200) << resp.body;
  const std::string* echoed = RespHeader(resp, "x-amz-checksum-crc32c");
  ASSERT_NE(echoed, nullptr);
  EXPECT_EQ(*echoed, "4waSgw==");
  auto got = store_.Get("b", "k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*(*got)->data, "123456789");
}

TEST_F(ChecksumTest, PutObjectWithoutCrc32cNeitherChecksNorEchoes) {
  S3Request r = Req("x", "");
  HttpResponse resp = HandlePutObject(store_, r);
  EXPECT_EQ(resp.status, 200);
  EXPECT_EQ(RespHeader(resp, "x-amz-checksum-crc32c"), nullptr);
}

TEST_F(ChecksumTest, UploadPartChecksCrc32c) {
  auto id = store_.CreateUpload("b", "k", "", {});
  ASSERT_TRUE(id.ok());
  const std::string data(3000, 'p');

  HttpResponse wrong = Part(*id, data, Crc32cBase64(data + "x"));
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(ErrorCode(wrong), "BadDigest");
  EXPECT_TRUE(store_.GetUpload("b", "k", *id)->parts.empty()) << "a bad part was stored";

  HttpResponse malformed = Part(*id, data, "AAAAAAAA");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(ErrorCode(malformed), "InvalidRequest");
  EXPECT_TRUE(store_.GetUpload("b", "k", *id)->parts.empty());

  HttpResponse right = Part(*id, data, Crc32cBase64(data));
  ASSERT_EQ(right.status, 200) << right.body;
  const std::string* echoed = RespHeader(right, "x-amz-checksum-crc32c");
  ASSERT_NE(echoed, nullptr);
  EXPECT_EQ(*echoed, Crc32cBase64(data));
  auto upload = store_.GetUpload("b", "k", *id);
  ASSERT_EQ(upload->parts.size(), 1u);
  EXPECT_EQ(*upload->parts.at(1).data, data);

  // A wrong sum for an existing part number leaves the stored part alone.
  HttpResponse replace = Part(*id, "other", Crc32cBase64("0ther"));
  EXPECT_EQ(replace.status, 400);
  EXPECT_EQ(*store_.GetUpload("b", "k", *id)->parts.at(1).data, data);
}

}  // namespace
}  // namespace s3sim
