// ObjectClient over a real S3Executor and a FakeHttpTransport: the requests
// each operation builds (method, encoded URL, query, headers, body) and how
// answers, good and bad, become results or clear errors.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "s3/fake_http_transport.h"
#include "s3/object_client_impl.h"
#include "s3/s3_executor.h"
#include "s3/time_util.h"

namespace bucketfs::s3 {
namespace {

using namespace object_client_internal;  // NOLINT(google-build-using-namespace)

std::span<const std::byte> Bytes(std::string_view s) { return AsBytes(s); }
std::string Str(std::span<const std::byte> b, size_t n) {
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

constexpr const char* kBase = "http://s3.test:9000";

TEST(ObjectClientHelpersTest, ContentMd5AndCopySource) {
  EXPECT_EQ(ContentMd5(Bytes("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(ContentMd5(Bytes("hello")), "XUFAKrxLKna5cZ2REBfFkg==");
  EXPECT_EQ(CopySource("src", "dir/a b+c%d?#\xE2\x82\xAC"),
            "/src/dir/a%20b%2Bc%25d%3F%23%E2%82%AC");
}

TEST(ObjectClientHelpersTest, ParseContentRange) {
  auto r = ParseContentRange("bytes 10-19/100");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 10u);
  EXPECT_EQ(r->last, 19u);
  EXPECT_EQ(r->total, 100u);
  auto star = ParseContentRange("bytes 0-0/*");
  ASSERT_TRUE(star);
  EXPECT_FALSE(star->total);
  EXPECT_FALSE(ParseContentRange("bytes 10-9/100"));
  EXPECT_FALSE(ParseContentRange("bytes 10-19/15"));
  EXPECT_FALSE(ParseContentRange("items 0-1/2"));
  EXPECT_FALSE(ParseContentRange("bytes */100"));
}

TEST_F(ObjectClientTest, HeadObjectReadsHeaders) {
  fake_.AddResponse("HEAD", "/bkt/dir/file.bin",
                    FakeResponse{200,
                                 {{"Content-Length", "1234"},
                                  {"ETag", "\"abc\""},
                                  {"Last-Modified", "Mon, 12 Oct 2009 17:50:30 GMT"},
                                  {"Content-Type", "application/octet-stream"}}});
  auto r = client_->HeadObject({"bkt", "dir/file.bin", "\"abc\"", ""});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->size, 1234u);
  EXPECT_EQ(r->etag, "\"abc\"");
  EXPECT_EQ(r->content_type, "application/octet-stream");
  EXPECT_EQ(r->last_modified, ParseIso8601("2009-10-12T17:50:30Z"));
  const auto req = OnlyRequest();
  EXPECT_EQ(req.method, "HEAD");
  EXPECT_EQ(req.url, std::string(kBase) + "/bkt/dir/file.bin");
  EXPECT_EQ(req.Header("If-Match"), "\"abc\"");
  EXPECT_NE(req.Header("Authorization"), "");
}

TEST_F(ObjectClientTest, HeadObject404WithoutBodyIsEnoent) {
  fake_.AddResponse("HEAD", "/bkt/missing", FakeResponse{404});
  auto r = client_->HeadObject({"bkt", "missing"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, ENOENT);
  EXPECT_EQ(r.error().http_status, 404);
}

TEST_F(ObjectClientTest, KeysAreEncodedInUrls) {
  const std::string key = "dir/a b+c%d?e#f\xC3\xBC\xE2\x82\xAC~._-";
  fake_.AddResponse("PUT", "/", FakeResponse{200, {{"ETag", "\"e\""}}});
  ASSERT_TRUE(client_->PutObject({"bkt", key}, Bytes("x")).ok());
  EXPECT_EQ(OnlyRequest().url,
            std::string(kBase) + "/bkt/dir/a%20b%2Bc%25d%3Fe%23f%C3%BC%E2%82%AC~._-");

  fake_.Clear();
  fake_.AddResponse("PUT", "/", FakeResponse{200, {{"ETag", "\"e\""}}});
  const std::string long_key(1024, 'k');
  ASSERT_TRUE(client_->PutObject({"bkt", long_key}, Bytes("x")).ok());
  EXPECT_EQ(OnlyRequest().url, std::string(kBase) + "/bkt/" + long_key);
}

TEST_F(ObjectClientTest, PutObjectSendsBodyMd5AndHeaders) {
  fake_.AddResponse("PUT", "/bkt/k", FakeResponse{200, {{"ETag", "\"5d41402abc4b2a76\""}}});
  PutObjectParams p{"bkt", "k"};
  p.content_type = "text/plain";
  p.if_none_match = "*";
  auto r = client_->PutObject(p, Bytes("hello"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"5d41402abc4b2a76\"");
  const auto req = OnlyRequest();
  EXPECT_EQ(req.body, "hello");
  EXPECT_EQ(req.Header("Content-MD5"), "XUFAKrxLKna5cZ2REBfFkg==");
  EXPECT_EQ(req.Header("Content-Type"), "text/plain");
  EXPECT_EQ(req.Header("If-None-Match"), "*");

  // No ETag in the answer: allowed for PutObject, reported empty.
  fake_.Clear();
  fake_.AddResponse("PUT", "/bkt/k", FakeResponse{200});
  p.send_md5 = false;
  auto r2 = client_->PutObject(p, Bytes("hello"));
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->etag, "");
  EXPECT_EQ(OnlyRequest().Header("Content-MD5"), "");
}

TEST_F(ObjectClientTest, RangedGetStreamsIntoBuffer) {
  std::string object(100000, '\0');
  for (size_t i = 0; i < object.size(); ++i) object[i] = static_cast<char>('a' + i % 26);
  fake_.AddResponder("GET", "/bkt/obj", [&](const RecordedRequest& r) {
    return FakeHttpTransport::RangedObject(r, object);
  });
  std::vector<std::byte> buf(5000);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 40000;
  p.length = buf.size();
  auto r = client_->GetObject(p, buf);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->bytes, 5000u);
  EXPECT_EQ(r->object_size, object.size());
  EXPECT_EQ(r->etag, "\"fake-etag\"");
  EXPECT_EQ(Str(buf, buf.size()), object.substr(40000, 5000));
  EXPECT_EQ(OnlyRequest().Header("Range"), "bytes=40000-44999");
}

TEST_F(ObjectClientTest, WholeObjectGetReportsBytesWhenSmallerThanBuffer) {
  fake_.AddResponse("GET", "/bkt/small", FakeResponse{200, {{"ETag", "\"s\""}}, "tiny body"});
  std::vector<std::byte> buf(64);
  auto r = client_->GetObject({"bkt", "small"}, buf);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->bytes, 9u);
  EXPECT_EQ(r->object_size, 9u);
  EXPECT_EQ(Str(buf, 9), "tiny body");
  EXPECT_EQ(OnlyRequest().Header("Range"), "");
}

TEST_F(ObjectClientTest, WholeObjectGetLargerThanBufferFails) {
  fake_.AddResponse("GET", "/bkt/big", FakeResponse{200, {}, std::string(100, 'x')});
  std::vector<std::byte> buf(64);
  auto r = client_->GetObject({"bkt", "big"}, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BufferTooSmall");
  EXPECT_EQ(r.error().errno_value, EOVERFLOW);
}

TEST_F(ObjectClientTest, RangedGetShortAnswerIsAnError) {
  // The object ends before the asked range does: fewer bytes, no transport error.
  fake_.AddResponse("GET", "/bkt/obj",
                    FakeResponse{206, {{"Content-Range", "bytes 0-4/5"}}, "12345"});
  std::vector<std::byte> buf(10);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 0;
  p.length = 10;
  auto r = client_->GetObject(p, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_NE(r.error().ToString().find("5 of 10"), std::string::npos) << r.error().ToString();
}

TEST_F(ObjectClientTest, RangedGetLongAnswerIsAnError) {
  fake_.AddResponse("GET", "/bkt/obj",
                    FakeResponse{206, {{"Content-Range", "bytes 0-9/100"}}, std::string(20, 'y')});
  std::vector<std::byte> buf(10);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 0;
  p.length = 10;
  auto r = client_->GetObject(p, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
}

TEST_F(ObjectClientTest, RangedGetIgnoredRangeIsAnError) {
  fake_.AddResponse("GET", "/bkt/obj", FakeResponse{200, {}, std::string(10, 'z')});
  std::vector<std::byte> buf(5);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 5;
  p.length = 5;
  auto r = client_->GetObject(p, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
}

TEST_F(ObjectClientTest, WrongContentLengthOnWholeGetIsAnError) {
  fake_.AddResponse("GET", "/bkt/obj",
                    FakeResponse{200, {{"Content-Length", "100"}}, std::string(50, 'q')});
  std::vector<std::byte> buf(200);
  auto r = client_->GetObject({"bkt", "obj"}, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
}

TEST_F(ObjectClientTest, TruncatedBodyResumesOrFailsNeverShort) {
  const std::string object = "0123456789";
  int calls = 0;
  fake_.AddResponder("GET", "/bkt/obj", [&](const RecordedRequest& r) {
    FakeResponse resp = FakeHttpTransport::RangedObject(r, object);
    if (++calls == 1) {  // the first answer dies after 4 body bytes
      resp.error_code = "Reset";
      resp.fail_after_bytes = 4;
    }
    return resp;
  });
  std::vector<std::byte> buf(10);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 0;
  p.length = 10;
  auto r = client_->GetObject(p, buf);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Str(buf, 10), object);
  const auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].Header("Range"), "bytes=4-9");

  // Every attempt dies: an error, never a short buffer reported as success.
  fake_.Clear();
  fake_.AddResponder("GET", "/bkt/obj", [&](const RecordedRequest& req) {
    FakeResponse resp = FakeHttpTransport::RangedObject(req, object);
    resp.error_code = "Reset";
    resp.fail_after_bytes = 2;
    return resp;
  });
  auto failed = client_->GetObject(p, buf);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, "Reset");
  EXPECT_EQ(fake_.request_count(), 3u);  // max_attempts
}

TEST_F(ObjectClientTest, GetRejectsBadArguments) {
  std::vector<std::byte> buf(10);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 0;
  p.length = 9;  // != buf.size()
  EXPECT_EQ(client_->GetObject(p, buf).error().errno_value, EINVAL);
  p.length.reset();
  EXPECT_EQ(client_->GetObject(p, buf).error().errno_value, EINVAL);
  EXPECT_EQ(client_->GetObject({"bkt", ""}, buf).error().errno_value, EINVAL);
  EXPECT_EQ(fake_.request_count(), 0u);
}

TEST_F(ObjectClientTest, GetObjectAsyncDeliversOnCallback) {
  const std::string object = "0123456789abcdef";
  fake_.AddResponder("GET", "/bkt/obj", [&](const RecordedRequest& r) {
    return FakeHttpTransport::RangedObject(r, object);
  });
  std::vector<std::byte> buf(4);
  GetObjectParams p{"bkt", "obj"};
  p.offset = 10;
  p.length = 4;
  std::promise<Result<GetObjectResult>> promise;
  client_->GetObjectAsync(p, buf, [&](Result<GetObjectResult> r) { promise.set_value(r); });
  auto r = promise.get_future().get();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Str(buf, 4), "abcd");
  EXPECT_EQ(r->object_size, 16u);
}

TEST_F(ObjectClientTest, UploadPartSendsMd5AndRequiresEtag) {
  fake_.AddResponse("PUT", "/bkt/k?partNumber=3&uploadId=up%2B1",
                    FakeResponse{200, {{"ETag", "\"p3\""}}});
  auto r = client_->UploadPart({"bkt", "k", "up+1", 3}, Bytes("hello"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"p3\"");
  EXPECT_EQ(OnlyRequest().Header("Content-MD5"), "XUFAKrxLKna5cZ2REBfFkg==");

  fake_.Clear();
  fake_.AddResponse("PUT", "/bkt/k", FakeResponse{200});
  auto missing = client_->UploadPart({"bkt", "k", "up", 1}, Bytes("x"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "MissingETag");

  std::promise<Result<UploadPartResult>> promise;
  client_->UploadPartAsync({"bkt", "k", "up", 2}, Bytes("x"),
                           [&](Result<UploadPartResult> res) { promise.set_value(res); });
  EXPECT_EQ(promise.get_future().get().error().code, "MissingETag");

  EXPECT_EQ(client_->UploadPart({"bkt", "k", "up", 0}, Bytes("x")).error().errno_value, EINVAL);
  EXPECT_EQ(client_->UploadPart({"bkt", "k", "up", 10001}, Bytes("x")).error().errno_value, EINVAL);
}

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

TEST_F(ObjectClientTest, CompleteIsNotBlindlyRetriedOn5xx) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{500, {}, "<Error><Code>InternalError</Code></Error>"});
  fake_.AddResponse("POST", "/bkt/k?uploadId=U", FakeResponse{200, {}, kCompleteOk});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 500);
  EXPECT_EQ(fake_.request_count(), 1u);
}

TEST_F(ObjectClientTest, CompleteNoSuchUploadAfterAmbiguousAttemptSaysSo) {
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{200, {}, "<Error><Code>InternalError</Code></Error>"});
  fake_.AddResponse("POST", "/bkt/k?uploadId=U",
                    FakeResponse{404, {}, "<Error><Code>NoSuchUpload</Code></Error>"});
  auto r = client_->CompleteMultipartUpload({"bkt", "k", "U", {{1, "\"a\""}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "NoSuchUpload");
  EXPECT_NE(r.error().message.find("may have completed"), std::string::npos);
  EXPECT_EQ(fake_.request_count(), 2u);
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
                                 "</LastModified><ETag>\"cp\"</ETag></CopyPartResult>"});
  UploadPartCopyParams p{"bkt", "dst", "U", 2, "src", "a b/c+d"};
  p.source_offset = 100;
  p.source_length = 50;
  p.source_if_match = "\"srcetag\"";
  auto r = client_->UploadPartCopy(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"cp\"");
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

}  // namespace
}  // namespace bucketfs::s3

namespace bucketfs::s3 {
namespace {

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
