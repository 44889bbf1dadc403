// ObjectClient data path over a real S3Executor and a FakeHttpTransport:
// HeadObject, GetObject (ranged, whole, async; short, long, misplaced and
// cut bodies), PutObject, UploadPart, and how keys are encoded in URLs.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "s3/object_client_test_fixture.h"
#include "s3/time_util.h"

namespace bucketfs::s3 {
namespace {

using namespace object_client_internal;  // NOLINT(google-build-using-namespace)
using object_client_testing::Bytes;
using object_client_testing::kBase;
using object_client_testing::ObjectClientTest;
using object_client_testing::Str;

TEST(ObjectClientHelpersTest, ContentMd5AndCopySource) {
  EXPECT_EQ(ContentMd5(Bytes("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(ContentMd5(Bytes("hello")), "XUFAKrxLKna5cZ2REBfFkg==");
  EXPECT_EQ(CopySource("src", "dir/a b+c%d?#\xE2\x82\xAC"),
            "/src/dir/a%20b%2Bc%25d%3F%23%E2%82%AC");
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

TEST_F(ObjectClientTest, HeadObjectWithoutContentLengthIsMalformed) {
  fake_.AddResponse("HEAD", "/bkt/k", FakeResponse{200, {{"Content-Length", "lots"}}});
  auto r = client_->HeadObject({"bkt", "k"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MalformedResponse");
  EXPECT_EQ(r.error().errno_value, EIO);
}

TEST_F(ObjectClientTest, GetWithLengthOnlyStartsAtZeroAndSendsIfMatch) {
  fake_.AddResponder("GET", "/bkt/obj", [](const RecordedRequest& r) {
    return FakeHttpTransport::RangedObject(r, "0123456789", "\"v1\"");
  });
  std::vector<std::byte> buf(3);
  GetObjectParams p{"bkt", "obj"};
  p.length = 3;
  p.if_match = "\"v1\"";
  auto r = client_->GetObject(p, buf);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Str(buf, 3), "012");
  EXPECT_EQ(OnlyRequest().Header("Range"), "bytes=0-2");
  EXPECT_EQ(OnlyRequest().Header("If-Match"), "\"v1\"");

  // The object changed: 412, no bytes reported.
  p.if_match = "\"v0\"";
  auto stale = client_->GetObject(p, buf);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().http_status, 412);
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
  p.checksum = BodyChecksum::kNone;
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

TEST_F(ObjectClientTest, GetObjectAsyncPassesRunOnCallerToTheTransport) {
  const std::string object = "0123456789abcdef";
  std::vector<std::byte> buf(4);
  for (bool on_caller : {false, true}) {
    fake_.Clear();
    fake_.AddResponder("GET", "/bkt/obj", [&](const RecordedRequest& r) {
      return FakeHttpTransport::RangedObject(r, object);
    });
    GetObjectParams p{"bkt", "obj"};
    p.offset = 2;
    p.length = 4;
    p.run_on_caller = on_caller;
    std::promise<Result<GetObjectResult>> promise;
    client_->GetObjectAsync(p, buf, [&](Result<GetObjectResult> r) { promise.set_value(r); });
    ASSERT_TRUE(promise.get_future().get().ok());
    EXPECT_EQ(OnlyRequest().run_on_caller, on_caller);
  }
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

}  // namespace
}  // namespace bucketfs::s3
