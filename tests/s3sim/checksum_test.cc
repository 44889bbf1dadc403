// x-amz-checksum-crc32c on PutObject and UploadPart, through the handlers:
// a wrong sum is 400 BadDigest and stores nothing, a malformed one is 400
// InvalidRequest, a right one is stored and echoed. CompleteMultipartUpload
// checks each part's ChecksumCRC32C (InvalidPart when wrong, InvalidRequest
// when an upload created with CRC32C leaves one out); ListParts reports them.
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

class CompleteCrc32cTest : public ChecksumTest {
 protected:
  // An upload created with `algorithm` holding parts 1 (5 MiB of 'a', sent
  // with its CRC32C) and 2 ("tail", sent without one).
  void SetUp() override {
    http_ = HttpRequest{};
    http_.method = "POST";
    if (!algorithm_.empty()) http_.headers.emplace_back("x-amz-checksum-algorithm", algorithm_);
    S3Request create;
    create.http = &http_;
    create.bucket = "b";
    create.key = "k";
    create.request_id = "req";
    create.query = {{"uploads", ""}};
    HttpResponse created = HandleCreateMultipartUpload(store_, create);
    ASSERT_EQ(created.status, 200) << created.body;
    const size_t a = created.body.find("<UploadId>"), b = created.body.find("</UploadId>");
    upload_id_ = created.body.substr(a + 10, b - a - 10);
    part1_ = std::string(5 << 20, 'a');
    HttpResponse p1 = Part(upload_id_, part1_, Crc32cBase64(part1_));
    ASSERT_EQ(p1.status, 200) << p1.body;
    etag1_ = *RespHeader(p1, "etag");
    S3Request r2 = Req("tail", "");
    r2.query = {{"partNumber", "2"}, {"uploadId", upload_id_}};
    HttpResponse p2 = HandleUploadPart(store_, r2);
    ASSERT_EQ(p2.status, 200) << p2.body;
    etag2_ = *RespHeader(p2, "etag");
  }

  // Completes with parts 1 and 2; an empty sum leaves <ChecksumCRC32C> out.
  HttpResponse Complete(const std::string& crc1, const std::string& crc2) {
    std::string xml = "<CompleteMultipartUpload>";
    auto part = [&](int n, const std::string& etag, const std::string& crc) {
      xml += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>" + etag + "</ETag>";
      if (!crc.empty()) xml += "<ChecksumCRC32C>" + crc + "</ChecksumCRC32C>";
      xml += "</Part>";
    };
    part(1, etag1_, crc1);
    part(2, etag2_, crc2);
    xml += "</CompleteMultipartUpload>";
    S3Request r = Req(xml, "");
    http_.method = "POST";
    r.query = {{"uploadId", upload_id_}};
    return HandleCompleteMultipartUpload(store_, r);
  }

  HttpResponse ListParts() {
    S3Request r = Req("", "");
    http_.method = "GET";
    r.query = {{"uploadId", upload_id_}};
    return HandleListParts(store_, r);
  }

  std::string algorithm_ = "CRC32C";
  std::string upload_id_, etag1_, etag2_, part1_;
};

TEST_F(CompleteCrc32cTest, ListPartsReportsTheAlgorithmAndEachSentSum) {
  HttpResponse list = ListParts();
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find("<ChecksumAlgorithm>CRC32C</ChecksumAlgorithm>"), std::string::npos);
  EXPECT_NE(list.body.find("<ChecksumCRC32C>" + Crc32cBase64(part1_) + "</ChecksumCRC32C>"),
            std::string::npos)
      << list.body;
  // Part 2 was sent without a sum: none is reported for it.
  EXPECT_EQ(list.body.find("<ChecksumCRC32C>", list.body.find("<PartNumber>2<")), std::string::npos)
      << list.body;
}

TEST_F(CompleteCrc32cTest, AWrongPartSumIsInvalidPartAndCompletesNothing) {
  HttpResponse wrong = Complete(Crc32cBase64(part1_), Crc32cBase64("tai1"));
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(ErrorCode(wrong), "InvalidPart");
  wrong = Complete(Crc32cBase64("x" + part1_), Crc32cBase64("tail"));
  EXPECT_EQ(ErrorCode(wrong), "InvalidPart");
  wrong = Complete("not base64!", Crc32cBase64("tail"));
  EXPECT_EQ(ErrorCode(wrong), "InvalidPart");
  EXPECT_EQ(store_.Get("b", "k").error().code, "NoSuchKey");
  EXPECT_TRUE(store_.GetUpload("b", "k", upload_id_).ok()) << "the upload must stay open";
}

TEST_F(CompleteCrc32cTest, AMissingPartSumIsInvalidRequestForACrc32cUpload) {
  HttpResponse missing = Complete(Crc32cBase64(part1_), "");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(ErrorCode(missing), "InvalidRequest");
  EXPECT_NE(missing.body.find("It was missing for part 2"), std::string::npos) << missing.body;
  EXPECT_EQ(store_.Get("b", "k").error().code, "NoSuchKey");
}

TEST_F(CompleteCrc32cTest, RightSumsComplete) {
  // Part 2's sum is computed by the server (it was sent without one).
  HttpResponse done = Complete(Crc32cBase64(part1_), Crc32cBase64("tail"));
  ASSERT_EQ(done.status, 200) << done.body;
  auto got = store_.Get("b", "k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*(*got)->data, part1_ + "tail");
}

class CompleteWithoutAlgorithmTest : public CompleteCrc32cTest {
 protected:
  CompleteWithoutAlgorithmTest() { algorithm_.clear(); }
};

TEST_F(CompleteWithoutAlgorithmTest, SumsAreOptionalButCheckedWhenGiven) {
  EXPECT_EQ(ErrorCode(Complete(Crc32cBase64("nope"), "")), "InvalidPart");
  HttpResponse done = Complete("", "");
  ASSERT_EQ(done.status, 200) << done.body;
}

}  // namespace
}  // namespace s3sim
