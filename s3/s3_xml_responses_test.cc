// Recorded-style S3 XML answers (modelled on the S3 API reference examples)
// plus the variants stores really send: unknown elements, odd ETags,
// namespaces, URL-encoded keys, errors inside HTTP 200, broken bodies.
#include "s3/s3_xml_responses.h"

#include <gtest/gtest.h>

#include <cstring>
#include <pugixml.hpp>

#include "s3/time_util.h"

namespace bucketfs::s3 {
namespace {

constexpr const char* kListV2 = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name>
  <Prefix>photos/</Prefix>
  <KeyCount>3</KeyCount>
  <MaxKeys>1000</MaxKeys>
  <Delimiter>/</Delimiter>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents>
    <Key>photos/2006/a.jpg</Key>
    <LastModified>2009-10-12T17:50:30.000Z</LastModified>
    <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>
    <Size>434234</Size>
    <StorageClass>STANDARD</StorageClass>
    <Owner><ID>abc</ID><DisplayName>me</DisplayName></Owner>
    <ChecksumAlgorithm>CRC32</ChecksumAlgorithm>
  </Contents>
  <Contents>
    <Key>photos/b.jpg</Key>
    <LastModified>2009-10-12T17:50:30Z</LastModified>
    <ETag>fba9dede5f27731c9771645a39863328-3</ETag>
    <Size>0</Size>
  </Contents>
  <Contents>
    <Key>photos/c</Key>
    <LastModified>2009-10-12T17:50:30.000Z</LastModified>
    <ETag></ETag>
    <Size>18446744073709551615</Size>
    <FutureField attr="1"><X/></FutureField>
  </Contents>
  <Contents>
    <Key>photos/d</Key>
    <LastModified>2009-10-12T17:50:30.000Z</LastModified>
    <Size>5</Size>
  </Contents>
  <CommonPrefixes><Prefix>photos/2006/</Prefix></CommonPrefixes>
  <CommonPrefixes><Prefix>photos/2007/</Prefix></CommonPrefixes>
</ListBucketResult>)";

TEST(S3XmlTest, ListObjectsV2ReadsObjectsPrefixesAndToken) {
  auto r = ParseListObjectsV2(kListV2);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->objects.size(), 4u);
  EXPECT_EQ(r->objects[0].key, "photos/2006/a.jpg");
  EXPECT_EQ(r->objects[0].size, 434234u);
  EXPECT_EQ(r->objects[0].etag, "\"fba9dede5f27731c9771645a39863328\"");
  EXPECT_EQ(r->objects[0].storage_class, "STANDARD");
  EXPECT_EQ(r->objects[0].last_modified, ParseIso8601("2009-10-12T17:50:30Z"));
  EXPECT_EQ(r->objects[1].etag, "fba9dede5f27731c9771645a39863328-3");  // unquoted, kept
  EXPECT_EQ(r->objects[1].size, 0u);
  EXPECT_EQ(r->objects[2].etag, "");  // empty
  EXPECT_EQ(r->objects[2].size, UINT64_MAX);
  EXPECT_EQ(r->objects[3].etag, "");  // missing
  EXPECT_EQ(r->objects[3].storage_class, "");
  EXPECT_EQ(r->common_prefixes, (std::vector<std::string>{"photos/2006/", "photos/2007/"}));
  EXPECT_TRUE(r->is_truncated);
  EXPECT_EQ(r->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3XmlTest, ListObjectsV2EmptyAndUnnamespaced) {
  auto r = ParseListObjectsV2(
      "<ListBucketResult><Name>b</Name><KeyCount>0</KeyCount>"
      "<IsTruncated>false</IsTruncated></ListBucketResult>");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->objects.empty());
  EXPECT_TRUE(r->common_prefixes.empty());
  EXPECT_FALSE(r->is_truncated);
}

TEST(S3XmlTest, ListObjectsV2DecodesUrlEncodedKeys) {
  auto r = ParseListObjectsV2(
      "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
      "<Contents><Key>a+b%2Bc%25d%3F%23%01%E2%82%AC</Key><Size>1</Size></Contents>"
      "<CommonPrefixes><Prefix>dir+with%20space%2F</Prefix></CommonPrefixes>"
      "</ListBucketResult>");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->objects.size(), 1u);
  EXPECT_EQ(r->objects[0].key, "a b+c%d?#\x01\xE2\x82\xAC");
  EXPECT_EQ(r->common_prefixes, (std::vector<std::string>{"dir with space/"}));
}

TEST(S3XmlTest, ListObjectsV2KeepsWhitespaceKeys) {
  auto r = ParseListObjectsV2(
      "<ListBucketResult><Contents><Key>  </Key><Size>1</Size></Contents>"
      "<Contents><Key> a b </Key><Size>2</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->objects.size(), 2u);
  EXPECT_EQ(r->objects[0].key, "  ");
  EXPECT_EQ(r->objects[1].key, " a b ");
}

TEST(S3XmlTest, ListObjectsV2WithoutEncodingTypeKeepsKeysVerbatim) {
  // A server that ignores encoding-type=url sends raw keys: do not decode.
  auto r = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated>"
      "<Contents><Key>a+b%2B c</Key><Size>1</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->objects[0].key, "a+b%2B c");
}

TEST(S3XmlTest, ListObjectsV2Errors) {
  struct Case {
    std::string body, expect;
  } cases[] = {
      {"<ListBucketResult><Contents><Key>k</Key><Size>x1</Size></Contents></ListBucketResult>",
       "Size"},
      {"<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>", "Size"},
      {"<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", "Key"},
      {"<ListBucketResult><Contents><Key>k</Key><Size>1</Size><LastModified>soon</LastModified>"
       "</Contents></ListBucketResult>",
       "LastModified"},
      {"<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>", "IsTruncated"},
      {"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
       "NextContinuationToken"},
      {"<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>bad%zz</Key>"
       "<Size>1</Size></Contents></ListBucketResult>",
       "escape"},
      {std::string(kListV2).substr(0, 600), "malformed XML"},  // truncated body
      {"<!DOCTYPE html><html><head><title>Service Unavailable</title></head>"
       "<body><p>Try later</p></body></html>",
       "got <html>"},
      {"<html><body>unclosed<br></body></html>", "malformed XML"},
      {"", "empty"},
  };
  for (const auto& c : cases) {
    auto r = ParseListObjectsV2(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().code, "MalformedResponse") << c.body;
    EXPECT_EQ(r.error().errno_value, EIO);
    EXPECT_NE(r.error().message.find("ListObjectsV2"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << r.error().message;
  }
}

TEST(S3XmlTest, ListBuckets) {
  auto r = ParseListBuckets(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Owner><ID>bcaf1ffd86f461ca5fb16fd081034f</ID><DisplayName>webfile</DisplayName></Owner>
  <Buckets>
    <Bucket><Name>quotes</Name><CreationDate>2006-02-03T16:45:09.000Z</CreationDate></Bucket>
    <Bucket><Name>samples</Name><CreationDate>2006-02-03T16:41:58.000Z</CreationDate>
      <BucketRegion>us-east-1</BucketRegion></Bucket>
  </Buckets>
</ListAllMyBucketsResult>)");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->buckets.size(), 2u);
  EXPECT_EQ(r->buckets[0].name, "quotes");
  EXPECT_EQ(r->buckets[1].name, "samples");
  EXPECT_EQ(r->buckets[1].creation_date, ParseIso8601("2006-02-03T16:41:58Z"));
  auto empty = ParseListBuckets("<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->buckets.empty());
}

TEST(S3XmlTest, ListMultipartUploads) {
  auto r = ParseListMultipartUploads(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>bucket</Bucket>
  <KeyMarker></KeyMarker>
  <UploadIdMarker></UploadIdMarker>
  <NextKeyMarker>my%20movie.m2ts</NextKeyMarker>
  <NextUploadIdMarker>YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ</NextUploadIdMarker>
  <EncodingType>url</EncodingType>
  <MaxUploads>3</MaxUploads>
  <IsTruncated>true</IsTruncated>
  <Upload>
    <Key>my-divisor</Key>
    <UploadId>XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw</UploadId>
    <Initiator><ID>arn:aws:iam::111122223333:user/x</ID></Initiator>
    <StorageClass>STANDARD</StorageClass>
    <Initiated>2010-11-10T20:48:33.000Z</Initiated>
  </Upload>
  <Upload>
    <Key>my%20movie.m2ts</Key>
    <UploadId>VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>
    <Initiated>2010-11-10T20:48:34Z</Initiated>
  </Upload>
</ListMultipartUploadsResult>)");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->uploads.size(), 2u);
  EXPECT_EQ(r->uploads[0].key, "my-divisor");
  EXPECT_EQ(r->uploads[0].upload_id, "XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw");
  EXPECT_EQ(r->uploads[0].initiated, ParseIso8601("2010-11-10T20:48:33Z"));
  EXPECT_EQ(r->uploads[1].key, "my movie.m2ts");
  EXPECT_TRUE(r->is_truncated);
  EXPECT_EQ(r->next_key_marker, "my movie.m2ts");
  EXPECT_EQ(r->next_upload_id_marker, "YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ");
}

TEST(S3XmlTest, InitiateMultipartUpload) {
  auto r = ParseInitiateMultipartUpload(R"(<?xml version="1.0" encoding="UTF-8"?>
<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>example-bucket</Bucket><Key>example-object</Key>
  <UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>
</InitiateMultipartUploadResult>)");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->upload_id, "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA");
  auto missing = ParseInitiateMultipartUpload(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket></InitiateMultipartUploadResult>");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("UploadId"), std::string::npos);
  EXPECT_FALSE(ParseInitiateMultipartUpload(
                   "<InitiateMultipartUploadResult><UploadId/></InitiateMultipartUploadResult>")
                   .ok());
}

TEST(S3XmlTest, CompleteMultipartUploadSuccess) {
  auto r = ParseCompleteMultipartUpload(R"(<?xml version="1.0" encoding="UTF-8"?>
<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Location>http://Example-Bucket.s3.region.amazonaws.com/Example-Object</Location>
  <Bucket>Example-Bucket</Bucket>
  <Key>Example-Object</Key>
  <ETag>"3858f62230ac3c915f300c664312c11f-9"</ETag>
</CompleteMultipartUploadResult>)");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"3858f62230ac3c915f300c664312c11f-9\"");
}

TEST(S3XmlTest, CompleteMultipartUploadAfterKeepAliveWhitespace) {
  // While it assembles the parts, S3 sends whitespace to keep the connection
  // open; the document (declaration included) follows it.
  const std::string ok = std::string(300, ' ') + "\n \n" +
                         "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                         "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag>"
                         "</CompleteMultipartUploadResult>";
  auto r = ParseCompleteMultipartUpload(ok);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"x-3\"");
  const std::string err = std::string(100, ' ') +
                          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                          "<Error><Code>InternalError</Code></Error>";
  auto e = ParseCompleteMultipartUpload(err);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, "InternalError");
  EXPECT_TRUE(e.error().retryable);
  // Only whitespace arrived (the body was cut): a clear error.
  auto cut = ParseCompleteMultipartUpload(std::string(500, ' '));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, "MalformedResponse");
}

TEST(S3XmlTest, CompleteMultipartUploadErrorInsideHttp200) {
  // S3 sends 200 first, then this body when the completion fails.
  auto r = ParseCompleteMultipartUpload(R"(<?xml version="1.0" encoding="UTF-8"?>

<Error>
  <Code>InternalError</Code>
  <Message>We encountered an internal error. Please try again.</Message>
  <RequestId>656c76696e6727732072657175657374</RequestId>
  <HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId>
</Error>)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "InternalError");
  EXPECT_TRUE(r.error().retryable);
  EXPECT_EQ(r.error().http_status, 200);
  EXPECT_EQ(r.error().request_id, "656c76696e6727732072657175657374");
  EXPECT_EQ(r.error().errno_value, EIO);
  EXPECT_NE(r.error().message.find("CompleteMultipartUpload"), std::string::npos);

  auto bad_part = ParseCompleteMultipartUpload(
      "<Error><Code>InvalidPart</Code><Message>One or more of the specified parts could not be "
      "found.</Message></Error>");
  ASSERT_FALSE(bad_part.ok());
  EXPECT_EQ(bad_part.error().code, "InvalidPart");
  EXPECT_FALSE(bad_part.error().retryable);

  auto slow = ParseCopyPartResult("<Error><Code>SlowDown</Code></Error>");
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, "SlowDown");
  EXPECT_TRUE(slow.error().retryable);
}

TEST(S3XmlTest, CopyResults) {
  auto r = ParseCopyObjectResult(
      "<CopyObjectResult><LastModified>2009-10-28T22:32:00.000Z</LastModified>"
      "<ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->etag, "\"9b2cf535f27731c974343645a3985328\"");
  EXPECT_EQ(r->last_modified, ParseIso8601("2009-10-28T22:32:00Z"));
  auto part = ParseCopyPartResult(
      "<CopyPartResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<LastModified>2011-04-11T20:34:56.000Z</LastModified><ETag>\"9b2c\"</ETag>"
      "<ChecksumCRC32>abc</ChecksumCRC32></CopyPartResult>");
  ASSERT_TRUE(part.ok()) << part.error().ToString();
  EXPECT_EQ(part->etag, "\"9b2c\"");
  EXPECT_EQ(part->checksum_crc32c, "");  // a CRC32, not the CRC32C
  auto summed = ParseCopyPartResult(
      "<CopyPartResult><LastModified>2011-04-11T20:34:56.000Z</LastModified><ETag>\"9b2c\"</ETag>"
      "<ChecksumCRC32C>yZRlqg==</ChecksumCRC32C></CopyPartResult>");
  ASSERT_TRUE(summed.ok()) << summed.error().ToString();
  EXPECT_EQ(summed->checksum_crc32c, "yZRlqg==");
  EXPECT_FALSE(ParseCopyObjectResult("<CopyPartResult/>").ok());  // wrong root
}

TEST(S3XmlTest, DeleteResult) {
  const std::vector<std::string> keys = {"sample1.txt", "sample2.txt", "sample3.txt"};
  auto r = ParseDeleteResult(R"(<?xml version="1.0" encoding="UTF-8"?>
<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Deleted><Key>sample1.txt</Key></Deleted>
  <Deleted><Key>sample3.txt</Key><DeleteMarker>true</DeleteMarker></Deleted>
  <Error><Key>sample2.txt</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>
</DeleteResult>)",
                             keys, false);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->deleted, (std::vector<std::string>{"sample1.txt", "sample3.txt"}));
  ASSERT_EQ(r->failed.size(), 1u);
  EXPECT_EQ(r->failed[0].first, "sample2.txt");
  EXPECT_EQ(r->failed[0].second.code, "AccessDenied");
  EXPECT_EQ(r->failed[0].second.errno_value, EACCES);

  // Quiet: only failures are listed; the rest were deleted.
  auto q = ParseDeleteResult(
      "<DeleteResult><Error><Key>sample2.txt</Key><Code>InternalError</Code></Error>"
      "</DeleteResult>",
      keys, true);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->deleted, (std::vector<std::string>{"sample1.txt", "sample3.txt"}));
  ASSERT_EQ(q->failed.size(), 1u);
  EXPECT_TRUE(q->failed[0].second.retryable);
}

TEST(S3XmlTest, BuildCompleteMultipartUpload) {
  const std::string xml =
      BuildCompleteMultipartUploadXml({{1, "\"a54357aff0632cce46d942af68356b38\""}, {2, "e<&>"}});
  EXPECT_EQ(xml,
            "<?xml version=\"1.0\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1</PartNumber>"
            "<ETag>\"a54357aff0632cce46d942af68356b38\"</ETag></Part><Part><PartNumber>2"
            "</PartNumber><ETag>e&lt;&amp;&gt;</ETag></Part></CompleteMultipartUpload>");
}

TEST(S3XmlTest, BuildDeleteObjectsEscapesKeys) {
  const std::vector<std::string> keys = {
      "plain", "a<b>&c", "sp ace/ü€", "]]>", "cr\rlf\n\r\n", "  lead and trail  ", "'q\""};
  const std::string xml = BuildDeleteObjectsXml(keys, true);
  EXPECT_NE(xml.find("<Quiet>true</Quiet>"), std::string::npos);
  EXPECT_NE(xml.find("<Key>a&lt;b&gt;&amp;c</Key>"), std::string::npos) << xml;
  // Round trip through a parser gives back the exact keys.
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str()));
  std::vector<std::string> back;
  for (auto o : doc.document_element().children("Object")) back.push_back(o.child_value("Key"));
  EXPECT_EQ(back, keys);
}

TEST(S3XmlTest, BuildCreateBucket) {
  EXPECT_EQ(BuildCreateBucketXml("us-east-1"), "");
  EXPECT_EQ(BuildCreateBucketXml(""), "");
  EXPECT_EQ(BuildCreateBucketXml("eu-west-1"),
            "<?xml version=\"1.0\"?><CreateBucketConfiguration "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>eu-west-1"
            "</LocationConstraint></CreateBucketConfiguration>");
}

TEST(S3XmlTest, UrlDecode) {
  EXPECT_EQ(*UrlDecode("a%2Fb+c%7e", "Op"), "a/b c~");
  EXPECT_FALSE(UrlDecode("%", "Op").ok());
  EXPECT_FALSE(UrlDecode("%4", "Op").ok());
  EXPECT_FALSE(UrlDecode("%g0", "Op").ok());
}

}  // namespace
}  // namespace bucketfs::s3

namespace bucketfs::s3 {
namespace {

// Every cut of a recorded answer either fails with MalformedResponse or, once
// the root element is closed, parses to the full result: never a partial
// listing reported as success.
TEST(S3XmlTest, EveryTruncationOfAListingIsAnErrorOrComplete) {
  const std::string body = kListV2;
  const size_t root_end = body.find("</ListBucketResult>") + strlen("</ListBucketResult>");
  for (size_t n = 0; n < body.size(); ++n) {
    auto r = ParseListObjectsV2(std::string_view(body).substr(0, n));
    if (n < root_end) {
      ASSERT_FALSE(r.ok()) << "cut at " << n;
      EXPECT_EQ(r.error().code, "MalformedResponse");
    } else {
      ASSERT_TRUE(r.ok()) << "cut at " << n;
      EXPECT_EQ(r->objects.size(), 4u);
    }
  }
}

}  // namespace
}  // namespace bucketfs::s3
