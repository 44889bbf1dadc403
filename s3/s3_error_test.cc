// ParseS3Error / ErrnoForS3Code: real S3 error bodies, and the bad ones.
#include <gtest/gtest.h>

#include "s3/s3_executor.h"

namespace bucketfs::s3 {
namespace {

std::string ErrorXml(const std::string& code, const std::string& message,
                     const std::string& more = "") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>" +
         message + "</Message>" + more + "<RequestId>4442587FB7D0A2F9</RequestId>" +
         "<HostId>abc=</HostId></Error>";
}

TEST(S3Error, NoSuchKeyFromXml) {
  const Error e = ParseS3Error(
      404, ErrorXml("NoSuchKey", "The specified key does not exist.", "<Key>a/b</Key>"), {});
  EXPECT_EQ(e.errno_value, ENOENT);
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The specified key does not exist.");
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.request_id, "4442587FB7D0A2F9");
  EXPECT_FALSE(e.retryable);
  EXPECT_EQ(
      e.ToString(),
      "NoSuchKey (HTTP 404): The specified key does not exist. [request id 4442587FB7D0A2F9]");
}

TEST(S3Error, RequestIdHeaderWins) {
  const Error e = ParseS3Error(403, ErrorXml("AccessDenied", "Access Denied"),
                               {{"X-Amz-Request-Id", "HDR123"}});
  EXPECT_EQ(e.request_id, "HDR123");
  EXPECT_EQ(e.errno_value, EACCES);
}

struct TableCase {
  std::string code;
  int status;
  int errno_value;
  bool retryable;
};

class S3ErrorTableTest : public testing::TestWithParam<TableCase> {};

TEST_P(S3ErrorTableTest, MapsCode) {
  const TableCase& c = GetParam();
  const Error e = ParseS3Error(c.status, ErrorXml(c.code, "m"), {});
  EXPECT_EQ(e.code, c.code);
  EXPECT_EQ(e.errno_value, c.errno_value) << c.code;
  EXPECT_EQ(e.retryable, c.retryable) << c.code;
  EXPECT_EQ(ErrnoForS3Code(c.code, c.status), c.errno_value);
}

INSTANTIATE_TEST_SUITE_P(
    S3ErrorCodes, S3ErrorTableTest,
    testing::Values(
        TableCase{"NoSuchKey", 404, ENOENT, false}, TableCase{"NoSuchBucket", 404, ENOENT, false},
        TableCase{"NoSuchUpload", 404, ENOENT, false},
        TableCase{"AccessDenied", 403, EACCES, false},
        TableCase{"InvalidAccessKeyId", 403, EACCES, false},
        TableCase{"SignatureDoesNotMatch", 403, EACCES, false},
        TableCase{"AccountProblem", 403, EACCES, false},
        TableCase{"AllAccessDisabled", 403, EACCES, false},
        TableCase{"InvalidRange", 416, EINVAL, false},
        TableCase{"PreconditionFailed", 412, EIO, false},
        TableCase{"EntityTooLarge", 400, EFBIG, false},
        TableCase{"KeyTooLongError", 400, ENAMETOOLONG, false},
        TableCase{"SlowDown", 503, EIO, true}, TableCase{"ServiceUnavailable", 503, EIO, true},
        TableCase{"InternalError", 500, EIO, true}, TableCase{"RequestTimeout", 400, EIO, true},
        TableCase{"BucketAlreadyExists", 409, EEXIST, false},
        TableCase{"BucketAlreadyOwnedByYou", 409, EEXIST, false},
        TableCase{"BucketNotEmpty", 409, ENOTEMPTY, false},
        TableCase{"InvalidBucketName", 400, EINVAL, false},
        TableCase{"InvalidArgument", 400, EINVAL, false},
        TableCase{"MalformedXML", 400, EINVAL, false}, TableCase{"InvalidPart", 400, EINVAL, false},
        TableCase{"InvalidPartOrder", 400, EINVAL, false},
        TableCase{"EntityTooSmall", 400, EINVAL, false},
        TableCase{"NotImplemented", 501, ENOTSUP, false},
        TableCase{"TooManyBuckets", 400, EDQUOT, false},
        TableCase{"XMinioStorageFull", 507, ENOSPC, false},
        TableCase{"SomeFutureCode", 403, EACCES, false},
        TableCase{"SomeFutureCode", 404, ENOENT, false},
        TableCase{"SomeFutureCode", 409, EIO, false}, TableCase{"SomeFutureCode", 502, EIO, true},
        TableCase{"SomeFutureCode", 504, EIO, true}, TableCase{"SomeFutureCode", 429, EIO, true}),
    [](const testing::TestParamInfo<TableCase>& p) {
      return p.param.code + std::to_string(p.param.status);
    });

TEST(S3Error, EmptyBodyHeadRequestsUseStatus) {
  Error e = ParseS3Error(404, "", {{"x-amz-request-id", "R1"}});
  EXPECT_EQ(e.code, "NotFound");
  EXPECT_EQ(e.errno_value, ENOENT);
  EXPECT_EQ(e.request_id, "R1");
  EXPECT_FALSE(e.message.empty());

  e = ParseS3Error(403, "  \n", {});
  EXPECT_EQ(e.code, "Forbidden");
  EXPECT_EQ(e.errno_value, EACCES);

  e = ParseS3Error(412, "", {});
  EXPECT_EQ(e.code, "PreconditionFailed");
  EXPECT_EQ(e.errno_value, EIO);

  e = ParseS3Error(304, "", {});
  EXPECT_EQ(e.code, "NotModified");
  EXPECT_FALSE(e.retryable);

  e = ParseS3Error(503, "", {});
  EXPECT_EQ(e.code, "ServiceUnavailable");
  EXPECT_TRUE(e.retryable);
  EXPECT_EQ(e.errno_value, EIO);

  e = ParseS3Error(418, "", {});
  EXPECT_EQ(e.code, "HTTP418");
  EXPECT_EQ(e.errno_value, EIO);
}

TEST(S3Error, HtmlErrorPage) {
  const std::string html =
      "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
      "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";
  const Error e = ParseS3Error(502, html, {});
  EXPECT_EQ(e.code, "BadGateway");
  EXPECT_EQ(e.errno_value, EIO);
  EXPECT_TRUE(e.retryable);
  EXPECT_NE(e.message.find("HTML"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("502 Bad Gateway"), std::string::npos) << e.message;
  EXPECT_NE(e.ToString().find("HTTP 502"), std::string::npos);

  // An HTML 403 from a proxy still means "not allowed".
  const Error f = ParseS3Error(403, "<html><body>Forbidden by proxy</body></html>", {});
  EXPECT_EQ(f.errno_value, EACCES);
  EXPECT_FALSE(f.retryable);
}

TEST(S3Error, TruncatedXmlIsNotTrusted) {
  const std::string full = ErrorXml("NoSuchKey", "The specified key does not exist.");
  // Cut in the middle of the code: "NoSu" must not become the code.
  const std::string cut = full.substr(0, full.find("NoSuchKey") + 4);
  const Error e = ParseS3Error(500, cut, {});
  EXPECT_EQ(e.code, "InternalError");
  EXPECT_EQ(e.errno_value, EIO);
  EXPECT_TRUE(e.retryable);
  EXPECT_NE(e.message.find("malformed XML"), std::string::npos) << e.message;
}

TEST(S3Error, MalformedXml) {
  const Error e = ParseS3Error(400, "<Error><Code>Bad</Message></Error>", {});
  EXPECT_EQ(e.code, "BadRequest");
  EXPECT_EQ(e.errno_value, EINVAL);
  EXPECT_NE(e.message.find("malformed XML"), std::string::npos);

  const Error g = ParseS3Error(404, "{\"error\":\"not found\"}", {});
  EXPECT_EQ(g.errno_value, ENOENT);
  EXPECT_NE(g.message.find("not found"), std::string::npos);
}

TEST(S3Error, UnknownElementsAndMissingMessage) {
  const Error e = ParseS3Error(
      409, "<Error><Weird><Nested/></Weird><Code>BucketNotEmpty</Code><Extra>x</Extra></Error>",
      {});
  EXPECT_EQ(e.code, "BucketNotEmpty");
  EXPECT_EQ(e.errno_value, ENOTEMPTY);
  EXPECT_FALSE(e.message.empty());

  const Error f = ParseS3Error(400, "<Other><Something/></Other>", {});
  EXPECT_EQ(f.code, "BadRequest");
  EXPECT_EQ(f.errno_value, EINVAL);
}

TEST(S3Error, RedirectNamesTheRegion) {
  const Error e =
      ParseS3Error(301,
                   ErrorXml("PermanentRedirect",
                            "The bucket you are attempting to access must be addressed "
                            "using the specified endpoint.",
                            "<Endpoint>b.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>b</Bucket>"),
                   {{"x-amz-bucket-region", "eu-west-1"}});
  EXPECT_EQ(e.code, "PermanentRedirect");
  EXPECT_EQ(e.errno_value, EIO);
  EXPECT_NE(e.message.find("b.s3.eu-west-1.amazonaws.com"), std::string::npos);
  EXPECT_NE(e.message.find("eu-west-1)"), std::string::npos);
}

}  // namespace
}  // namespace bucketfs::s3
