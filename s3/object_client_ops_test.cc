// ObjectClient multipart, listing, delete, copy and bucket operations over a
// real S3Executor and a FakeHttpTransport (the requests each builds and how
// answers, including errors inside HTTP 200, become results), and
// MakeS3Client.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "s3/crc32c.h"
#include "s3/multipart_etag.h"
#include "s3/object_client_test_fixture.h"

namespace bucketfs::s3 {
namespace {

using namespace object_client_internal;  // NOLINT(google-build-using-namespace)
using object_client_testing::Bytes;
using object_client_testing::kBase;
using object_client_testing::ObjectClientTest;

TEST_F(ObjectClientTest, CreateMultipartUpload) {
  fake_.AddResponse("POST", "/bkt/big%20file?uploads=",
                    FakeResponse{200,
                                 {},
                                 "<InitiateMultipartUploadResult><Bucket>bkt</Bucket><Key>big "
                                 "file</Key><UploadId>ID-1</UploadId>"
                                 "</InitiateMultipartUploadResult>"});
  auto r = client_->CreateMultipartUpload({"bkt", "big file", "video/mp4"});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->upload_id, "ID-1");
  EXPECT_EQ(OnlyRequest().Header("Content-Type"), "video/mp4");
}

TEST_F(ObjectClientTest, Crc32cUploadNamesTheAlgorithmSendsEachPartsSumAndRepeatsIt) {
  fake_.AddResponse("POST", "/bkt/k?uploads=",
                    FakeResponse{200,
                                 {},
                                 "<InitiateMultipartUploadResult><UploadId>U</UploadId>"
                                 "</InitiateMultipartUploadResult>"});
  CreateMultipartUploadParams cp{"bkt", "k", ""};
  cp.checksum = BodyChecksum::kCrc32c;
  ASSERT_TRUE(client_->CreateMultipartUpload(cp).ok());
  EXPECT_EQ(OnlyRequest().Header("x-amz-checksum-algorithm"), "CRC32C");

  fake_.Clear();
  // The answer echoes some other sum: Complete must repeat the one computed
  // from the bytes sent, never what the server said.
  fake_.AddResponse("PUT", "/bkt/k?partNumber=1&uploadId=U",
                    FakeResponse{200, {{"ETag", "\"p1\""}, {"x-amz-checksum-crc32c", "AAAAAA=="}}});
  UploadPartParams up{"bkt", "k", "U", 1, BodyChecksum::kCrc32c};
  auto part = client_->UploadPart(up, Bytes("123456789"));
  ASSERT_TRUE(part.ok()) << part.error().ToString();
  EXPECT_EQ(OnlyRequest().Header("x-amz-checksum-crc32c"), "4waSgw==");
  EXPECT_EQ(OnlyRequest().Header("Content-MD5"), "");  // one checksum, not both
  EXPECT_EQ(part->checksum_crc32c, "4waSgw==");

  fake_.Clear();
  fake_.AddResponse(
      "POST", "/bkt/k?uploadId=U",
      FakeResponse{
          200,
          {},
          "<CompleteMultipartUploadResult><ETag>\"f-1\"</ETag></CompleteMultipartUploadResult>"});
  ASSERT_TRUE(
      client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"p1\"", "4waSgw=="}}}).ok());
  EXPECT_EQ(OnlyRequest().body,
            "<?xml version=\"1.0\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1</PartNumber>"
            "<ETag>\"p1\"</ETag><ChecksumCRC32C>4waSgw==</ChecksumCRC32C></Part>"
            "</CompleteMultipartUpload>");
}

TEST_F(ObjectClientTest, UploadPartSendsTheSumTheCallerComputed) {
  fake_.AddResponse("PUT", "/bkt/k?partNumber=2&uploadId=U",
                    FakeResponse{200, {{"ETag", "\"p2\""}}});
  UploadPartParams up{"bkt", "k", "U", 2, BodyChecksum::kCrc32c};
  up.crc32c = Crc32cToBase64(Crc32c(Bytes("56789"), Crc32c(Bytes("1234"))));  // in two pieces
  auto part = client_->UploadPart(up, Bytes("123456789"));
  ASSERT_TRUE(part.ok()) << part.error().ToString();
  EXPECT_EQ(OnlyRequest().Header("x-amz-checksum-crc32c"), "4waSgw==");  // as summed whole
  EXPECT_EQ(part->checksum_crc32c, "4waSgw==");

  fake_.Clear();
  fake_.AddResponse("PUT", "/bkt/k?partNumber=2&uploadId=U",
                    FakeResponse{200, {{"ETag", "\"p2\""}}});
  up.crc32c = "AAAAAA==";  // sent as given, not summed again
  ASSERT_TRUE(client_->UploadPart(up, Bytes("123456789")).ok());
  EXPECT_EQ(OnlyRequest().Header("x-amz-checksum-crc32c"), "AAAAAA==");
}

constexpr const char* kCompleteOk =
    "<CompleteMultipartUploadResult><ETag>\"final-2\"</ETag></CompleteMultipartUploadResult>";

TEST_F(ObjectClientTest, CompleteRetriesErrorInside200) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{200, {}, "<Error><Code>InternalError</Code></Error>"});
  fake_.AddResponse("POST", "/bkt/k?uploadId=U", FakeResponse{200, {}, kCompleteOk});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}, {2, "\"b\""}}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"final-2\"");
  const auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].body,
            "<?xml version=\"1.0\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1</PartNumber>"
            "<ETag>\"a\"</ETag></Part><Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag></Part>"
            "</CompleteMultipartUpload>");
  EXPECT_EQ(reqs[1].body, reqs[0].body);
}

TEST_F(ObjectClientTest, CompleteReportsNonRetryableErrorInside200) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{200,
                                 {},
                                 "<Error><Code>InvalidPart</Code><Message>gone</Message>"
                                 "</Error>"});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "InvalidPart");
  EXPECT_EQ(fake_.request_count(), 1u);
}

TEST_F(ObjectClientTest, CompleteIsRetriedOn5xx) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{500, {}, "<Error><Code>InternalError</Code></Error>"});
  fake_.AddResponse("POST", "/bkt/k?uploadId=U", FakeResponse{200, {}, kCompleteOk});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(fake_.request_count(), 2u);
}

// Two parts whose ETags are MD5s, and the ETag AWS gives the object they make.
const std::vector<CompletedPart> kMd5Parts = {{1, "\"0cc175b9c0f1b6a831c399e269772661\""},
                                              {2, "92eb5ffee6ae2fec3ad71c777531578f"}};

TEST_F(ObjectClientTest, CompleteWhoseAnswerWasLostFindsItsObject) {
  const std::string expected = *ExpectedMultipartEtag(kMd5Parts);
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{500, {}, "<Error><Code>InternalError</Code></Error>"});
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{404, {}, "<Error><Code>NoSuchUpload</Code></Error>"});
  fake_.AddResponse("HEAD", "/bkt/k",
                    FakeResponse{200, {{"Content-Length", "2"}, {"ETag", "\"" + expected + "\""}}});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", kMd5Parts});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(SameEtag(r->etag, expected));
  EXPECT_EQ(fake_.request_count(), 3u);
}

TEST_F(ObjectClientTest, CompleteNoSuchUploadWithAnotherObjectAtTheKeyFails) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{404, {}, "<Error><Code>NoSuchUpload</Code></Error>"});
  fake_.AddResponse("HEAD", "/bkt/k",
                    FakeResponse{200, {{"Content-Length", "2"}, {"ETag", "\"abc-2\""}}});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", kMd5Parts});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "NoSuchUpload");
  EXPECT_NE(r.error().message.find("another object"), std::string::npos) << r.error().message;
}

TEST_F(ObjectClientTest, CompleteNoSuchUploadWithNoObjectFails) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{404, {}, "<Error><Code>NoSuchUpload</Code></Error>"});
  fake_.AddResponse("HEAD", "/bkt/k", FakeResponse{404});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", kMd5Parts});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "NoSuchUpload");
  EXPECT_NE(r.error().message.find("no object"), std::string::npos) << r.error().message;
}

TEST_F(ObjectClientTest, CompleteNoSuchUploadWithUnknownPartEtagsSaysSo) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{200, {}, "<Error><Code>InternalError</Code></Error>"});
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{404, {}, "<Error><Code>NoSuchUpload</Code></Error>"});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "NoSuchUpload");
  EXPECT_NE(r.error().message.find("may have been completed"), std::string::npos);
  EXPECT_EQ(fake_.request_count(), 2u);  // nothing to recognise: no HEAD
}

TEST_F(ObjectClientTest, CompleteHtmlPageWith200IsMalformedNotRetried) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{200, {}, "<html><body>gateway says hi</body></html>"});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MalformedResponse");
  EXPECT_EQ(fake_.request_count(), 1u);
}

TEST_F(ObjectClientTest, CompleteGivesUpAfterMaxAttemptsOfErrorsInside200) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{200, {}, "<Error><Code>SlowDown</Code></Error>"});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SlowDown");
  EXPECT_EQ(fake_.request_count(), 3u);  // max_attempts
}

// The store may say nothing for minutes while it assembles the object: the
// usual 30 s stall limit must not fail a Complete that then succeeds.
TEST_F(ObjectClientTest, CompleteWaitsLongerThanTheStallLimitForAnAnswer) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U", FakeResponse{200, {}, kCompleteOk});
  ASSERT_TRUE(client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}}).ok());
  EXPECT_GE(OnlyRequest().low_speed_time, std::chrono::seconds(600));
  fake_.Clear();
  fake_.AddResponse("HEAD", "/bkt/k", FakeResponse{200, {{"Content-Length", "1"}}});
  ASSERT_TRUE(client_->HeadObject({"bkt", "k", "", ""}).ok());
  EXPECT_EQ(OnlyRequest().low_speed_time, std::chrono::seconds(30));  // others keep the default
}

TEST_F(ObjectClientTest, CompleteRejectsBadPartLists) {
  EXPECT_EQ(client_->CompleteMultipartUpload({"bkt", "k", "U", {}}).error().errno_value, EINVAL);
  EXPECT_EQ(
      client_->CompleteMultipartUpload({"bkt", "k", "U", {{2, "a"}, {1, "b"}}}).error().errno_value,
      EINVAL);
  EXPECT_EQ(client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, ""}}}).error().errno_value,
            EINVAL);
  EXPECT_EQ(fake_.request_count(), 0u);
}

TEST_F(ObjectClientTest, AbortAndListMultipartUploads) {
  fake_.AddResponse("DELETE", "/bkt/k?uploadId=U", FakeResponse{204});
  EXPECT_TRUE(client_->AbortMultipartUpload({"bkt", "k", "U"}).ok());
  fake_.AddResponse("GET", "/bkt?",
                    FakeResponse{200,
                                 {},
                                 "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
                                 "<Upload><Key>k</Key><UploadId>U</UploadId></Upload>"
                                 "</ListMultipartUploadsResult>"});
  ListMultipartUploadsParams p{"bkt", "pre/"};
  p.max_uploads = 10;
  auto r = client_->ListMultipartUploads(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->uploads.size(), 1u);
  EXPECT_EQ(r->uploads[0].upload_id, "U");
  EXPECT_EQ(fake_.requests().back().url,
            std::string(kBase) + "/bkt?encoding-type=url&max-uploads=10&prefix=pre%2F&uploads=");
}

TEST_F(ObjectClientTest, UploadPartCopyHeadersAndErrorInside200) {
  fake_.AddResponse("PUT", "/bkt/dst?partNumber=2&uploadId=U",
                    FakeResponse{200, {}, "<Error><Code>SlowDown</Code></Error>"});
  fake_.AddResponse("PUT", "/bkt/dst?partNumber=2&uploadId=U",
                    FakeResponse{200,
                                 {},
                                 "<CopyPartResult><LastModified>2011-04-11T20:34:56.000Z"
                                 "</LastModified><ETag>\"cp\"</ETag>"
                                 "<ChecksumCRC32C>AAAAAA==</ChecksumCRC32C></CopyPartResult>"});
  UploadPartCopyParams p{"bkt", "dst", "U", 2, "src", "a b/c+d"};
  p.source_offset = 100;
  p.source_length = 50;
  p.source_if_match = "\"srcetag\"";
  auto r = client_->UploadPartCopy(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"cp\"");
  EXPECT_EQ(r->checksum_crc32c, "AAAAAA==");  // for Complete
  const auto req = fake_.requests().back();
  EXPECT_EQ(req.Header("x-amz-copy-source"), "/src/a%20b/c%2Bd");
  EXPECT_EQ(req.Header("x-amz-copy-source-range"), "bytes=100-149");
  EXPECT_EQ(req.Header("x-amz-copy-source-if-match"), "\"srcetag\"");
  EXPECT_EQ(fake_.request_count(), 2u);
}

TEST_F(ObjectClientTest, ListObjectsV2QueryAndParse) {
  fake_.AddResponse("GET", "/bkt?",
                    FakeResponse{200,
                                 {},
                                 "<ListBucketResult><EncodingType>url</EncodingType>"
                                 "<IsTruncated>true</IsTruncated><NextContinuationToken>T2"
                                 "</NextContinuationToken><Contents><Key>d%2Fa+b</Key><Size>3"
                                 "</Size></Contents><CommonPrefixes><Prefix>d%2Fsub%2F</Prefix>"
                                 "</CommonPrefixes></ListBucketResult>"});
  ListObjectsV2Params p{"bkt", "d/", "/", "T1", "d/0", 50};
  auto r = client_->ListObjectsV2(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->objects.size(), 1u);
  EXPECT_EQ(r->objects[0].key, "d/a b");
  EXPECT_EQ(r->common_prefixes, std::vector<std::string>{"d/sub/"});
  EXPECT_EQ(r->next_continuation_token, "T2");
  EXPECT_EQ(OnlyRequest().url, std::string(kBase) +
                                   "/bkt?continuation-token=T1&delimiter=%2F&encoding-type=url&"
                                   "list-type=2&max-keys=50&prefix=d%2F&start-after=d%2F0");
}

// A store that answers a continuation token with the same token would keep
// a walk paging forever: the repeat is an error, not another page.
TEST_F(ObjectClientTest, ListObjectsV2RepeatedTokenIsAnError) {
  fake_.AddResponse("GET", "/bkt?",
                    FakeResponse{200,
                                 {},
                                 "<ListBucketResult><IsTruncated>true</IsTruncated>"
                                 "<NextContinuationToken>again</NextContinuationToken>"
                                 "</ListBucketResult>"});
  ListObjectsV2Params p{"bkt", "d/", "/", "again", "", 10};
  auto r = client_->ListObjectsV2(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_NE(r.error().message.find("never end"), std::string::npos) << r.error().message;
}

TEST_F(ObjectClientTest, ListObjectsV2BadBodiesAreClearErrors) {
  fake_.AddResponse("GET", "/bkt?",
                    FakeResponse{200,
                                 {{"Content-Type", "text/html"}},
                                 "<html><head><title>Login</title></head><body>proxy</body>"
                                 "</html>"});
  auto html = client_->ListObjectsV2({"bkt"});
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.error().code, "MalformedResponse");

  fake_.Clear();
  fake_.AddResponse("GET", "/bkt?",
                    FakeResponse{200, {}, "<ListBucketResult><Contents><Key>a</Key><Si"});
  auto truncated = client_->ListObjectsV2({"bkt"});
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, "MalformedResponse");
  EXPECT_NE(truncated.error().message.find("ListObjectsV2"), std::string::npos);

  fake_.Clear();
  fake_.AddResponse("GET", "/bkt?",
                    FakeResponse{503,
                                 {{"Content-Type", "text/html"}},
                                 "<html><body><h1>503 Service Unavailable</h1></body></html>"});
  auto unavailable = client_->ListObjectsV2({"bkt"});
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.error().http_status, 503);
  EXPECT_EQ(fake_.request_count(), 3u);  // retried up to max_attempts
}

TEST_F(ObjectClientTest, ListBuckets) {
  fake_.AddResponse("GET", std::string(kBase) + "/",
                    FakeResponse{200,
                                 {},
                                 "<ListAllMyBucketsResult><Buckets><Bucket><Name>b1</Name>"
                                 "<CreationDate>2020-01-01T00:00:00.000Z</CreationDate></Bucket>"
                                 "</Buckets></ListAllMyBucketsResult>"});
  auto r = client_->ListBuckets();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->buckets.size(), 1u);
  EXPECT_EQ(r->buckets[0].name, "b1");
}

TEST_F(ObjectClientTest, DeleteObjectAndObjects) {
  fake_.AddResponse("DELETE", "/bkt/k", FakeResponse{204});
  EXPECT_TRUE(client_->DeleteObject({"bkt", "k"}).ok());

  fake_.AddResponse("POST", "/bkt?delete=",
                    FakeResponse{200,
                                 {},
                                 "<DeleteResult><Error><Key>b&amp;</Key><Code>AccessDenied</Code>"
                                 "</Error></DeleteResult>"});
  auto r = client_->DeleteObjects({"bkt", {"a", "b&", "c"}, true});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->deleted, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(r->failed.size(), 1u);
  EXPECT_EQ(r->failed[0].first, "b&");
  const auto req = fake_.requests().back();
  EXPECT_EQ(req.Header("Content-MD5"), ContentMd5(Bytes(req.body)));
  EXPECT_NE(req.body.find("<Key>b&amp;</Key>"), std::string::npos);

  std::vector<std::string> too_many(1001, "k");
  EXPECT_EQ(client_->DeleteObjects({"bkt", too_many}).error().errno_value, EINVAL);
  auto none = client_->DeleteObjects({"bkt", {}});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(fake_.request_count(), 2u);
}

TEST_F(ObjectClientTest, CopyObject) {
  fake_.AddResponse("PUT", "/bkt/dst",
                    FakeResponse{200,
                                 {},
                                 "<CopyObjectResult><LastModified>2009-10-28T22:32:00.000Z"
                                 "</LastModified><ETag>\"c\"</ETag></CopyObjectResult>"});
  auto r = client_->CopyObject({"bkt", "dst", "src bkt", "k#1"});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"c\"");
  EXPECT_EQ(OnlyRequest().Header("x-amz-copy-source"), "/src%20bkt/k%231");
}

TEST_F(ObjectClientTest, CreateBucketUsEast1HasNoBody) {
  fake_.AddResponse("PUT", "/newb", FakeResponse{200});
  EXPECT_TRUE(client_->CreateBucket({"newb"}).ok());
  EXPECT_EQ(OnlyRequest().body, "");
  EXPECT_EQ(OnlyRequest().url, std::string(kBase) + "/newb");
}

class ObjectClientEuTest : public ObjectClientTest {
 protected:
  ObjectClientEuTest() : ObjectClientTest("eu-west-1") {}
};

TEST_F(ObjectClientEuTest, CreateBucketSendsLocationConstraint) {
  fake_.AddResponse("PUT", "/newb", FakeResponse{200});
  EXPECT_TRUE(client_->CreateBucket({"newb"}).ok());
  EXPECT_NE(OnlyRequest().body.find("<LocationConstraint>eu-west-1</LocationConstraint>"),
            std::string::npos);
}

TEST(ObjectClientFactoryTest, BadEndpointIsAnError) {
  ClientConfig config;
  config.endpoint_url = "ftp://nowhere";
  auto r = MakeS3Client(config, EnvMap{});
  EXPECT_FALSE(r.ok());
}

TEST(ObjectClientFactoryTest, RealClientReportsConnectFailure) {
  ClientConfig config;
  config.endpoint_url = "http://127.0.0.1:1";  // nothing listens on port 1
  config.force_path_style = true;
  config.max_attempts = 1;
  config.transport_threads = 1;
  config.credentials.no_sign_request = true;
  auto made = MakeS3Client(config, EnvMap{});
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  auto r = (*made)->HeadObject({"bkt", "key"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "ConnectFailed");
  // Destroying the client with an async request possibly in flight is safe.
  std::vector<std::byte> buf(4);
  (*made)->GetObjectAsync({"bkt", "key"}, buf,
                          [](Result<GetObjectResult> res) { EXPECT_FALSE(res.ok()); });
  made.value().reset();
}

}  // namespace
}  // namespace bucketfs::s3
