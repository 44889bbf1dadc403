// S3 operation handlers. The router (s3_app) names the operation, checks
// auth, faults and the payload hash; each handler here only does its
// operation against the Store and builds the S3 response (XML body, headers,
// S3 error codes).
#ifndef TESTS_S3SIM_HANDLERS_H_
#define TESTS_S3SIM_HANDLERS_H_

#include <cstdint>
#include <map>
#include <string>

#include "tests/s3sim/http_message.h"
#include "tests/s3sim/s3_error.h"
#include "tests/s3sim/store.h"

namespace s3sim {

struct S3Request {
  HttpRequest* http = nullptr;
  std::string bucket;                        // decoded; empty for service-level requests
  std::string key;                           // decoded; empty for bucket-level requests
  std::map<std::string, std::string> query;  // decoded
  std::string request_id;
  std::string op;

  bool Has(const std::string& name) const { return query.count(name) != 0; }
  std::string Q(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  }
  const std::string* Header(std::string_view name) const { return http->Header(name); }
};

// Names the S3 operation a request asks for ("GetObject", ...), or "" when
// s3sim does not implement it.
std::string ClassifyOperation(const S3Request& r);

HttpResponse ErrorResponse(const S3Error& error, const S3Request& r);
HttpResponse XmlResponse(int status, std::string body);

// Objects (handlers_object.cc).
HttpResponse HandleGetObject(Store& store, const S3Request& r);  // GET and HEAD
HttpResponse HandlePutObject(Store& store, S3Request& r);
HttpResponse HandleCopyObject(Store& store, const S3Request& r);
HttpResponse HandleDeleteObject(Store& store, const S3Request& r);
// Parses x-amz-copy-source ("[/]bucket/key[?versionId=..]", URL-encoded).
Expected<std::pair<std::string, std::string>> ParseCopySource(const std::string& value);
// Checks Content-MD5 against the body when present.
std::optional<S3Error> CheckContentMd5(const S3Request& r, std::string_view body);
// Checks x-amz-checksum-crc32c against the body when present: 400
// InvalidRequest when it is not base64 of 4 bytes, 400 BadDigest on mismatch.
std::optional<S3Error> CheckChecksumCrc32c(const S3Request& r, std::string_view body);
// Echoes the request's x-amz-checksum-crc32c on a 200 response, as S3 does.
void EchoChecksum(const S3Request& r, HttpResponse& resp);

// Buckets and listings (handlers_bucket.cc).
HttpResponse HandleListBuckets(Store& store, const S3Request& r);
HttpResponse HandleCreateBucket(Store& store, const S3Request& r);
HttpResponse HandleDeleteBucket(Store& store, const S3Request& r);
HttpResponse HandleHeadBucket(Store& store, const S3Request& r);
HttpResponse HandleGetBucketLocation(Store& store, const S3Request& r);
HttpResponse HandleListObjects(Store& store, const S3Request& r, bool v2);
HttpResponse HandleDeleteObjects(Store& store, const S3Request& r);

// Multipart uploads (handlers_multipart.cc).
HttpResponse HandleCreateMultipartUpload(Store& store, const S3Request& r);
HttpResponse HandleUploadPart(Store& store, S3Request& r);
HttpResponse HandleUploadPartCopy(Store& store, const S3Request& r);
HttpResponse HandleCompleteMultipartUpload(Store& store, const S3Request& r);
HttpResponse HandleAbortMultipartUpload(Store& store, const S3Request& r);
HttpResponse HandleListMultipartUploads(Store& store, const S3Request& r);
HttpResponse HandleListParts(Store& store, const S3Request& r);

// Stored headers echoed on GET/HEAD: x-amz-meta-* and the standard
// representation headers a PUT may set.
HeaderList StoredHeaders(const HttpRequest& req);

}  // namespace s3sim

#endif  // TESTS_S3SIM_HANDLERS_H_
