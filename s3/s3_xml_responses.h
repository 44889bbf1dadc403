// S3's XML: parsers for the answers of the typed operations and builders
// for the request bodies, on top of xml_util (pugixml behind typed getters).
//
// Parsers take the body of a 2xx answer and return the ObjectClient result
// struct or an Error:
//  - malformed, truncated, empty or non-XML bodies (an HTML page) give
//    "MalformedResponse" (EIO) naming the operation;
//  - an <Error> document, which S3 sends with HTTP 200 for
//    CompleteMultipartUpload, CopyObject and UploadPartCopy when it fails
//    after the status line went out, gives that S3 error, marked retryable
//    for InternalError / SlowDown / ServiceUnavailable (see
//    ErrorFromErrorDocument);
//  - unknown elements are ignored, namespaces do not matter.
// ETags are kept exactly as sent (quoted, unquoted or empty).
//
// Listings are requested with encoding-type=url (so keys holding characters
// XML 1.0 cannot carry survive); when the answer says
// <EncodingType>url</EncodingType>, keys and prefixes are URL-decoded here.
//
// Builders serialize through pugixml, which escapes keys; nothing is
// concatenated into XML by hand.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::s3 {

Result<ListObjectsV2Result> ParseListObjectsV2(std::string_view body);
Result<ListBucketsResult> ParseListBuckets(std::string_view body);
Result<ListMultipartUploadsResult> ParseListMultipartUploads(std::string_view body);
Result<CreateMultipartUploadResult> ParseInitiateMultipartUpload(std::string_view body);
Result<CompleteMultipartUploadResult> ParseCompleteMultipartUpload(std::string_view body);
// `requested` are the keys sent; with `quiet`, S3 lists only failures, so
// every requested key not listed as failed is reported deleted.
Result<DeleteObjectsResult> ParseDeleteResult(std::string_view body,
                                              const std::vector<std::string>& requested,
                                              bool quiet);
// <CopyObjectResult> (CopyObject) or <CopyPartResult> (UploadPartCopy).
Result<CopyObjectResult> ParseCopyObjectResult(std::string_view body);
Result<CopyObjectResult> ParseCopyPartResult(std::string_view body);

// The Error an <Error><Code>..</Code><Message>..</Message></Error> body
// describes, for a document received with `http_status`. errno comes from
// ErrnoForS3Code; retryable is set for InternalError, SlowDown,
// ServiceUnavailable and RequestTimeout.
Error ErrorFromErrorDocument(std::string_view code, std::string_view message,
                             std::string_view request_id, int http_status);

// Request bodies.
std::string BuildCompleteMultipartUploadXml(const std::vector<CompletedPart>& parts);
std::string BuildDeleteObjectsXml(const std::vector<std::string>& keys, bool quiet);
// Empty for us-east-1 (S3 rejects an explicit us-east-1 constraint).
std::string BuildCreateBucketXml(std::string_view region);

// Decodes %XX and '+' (as a space), as S3's encoding-type=url produces.
// Invalid escapes give MalformedResponse.
Result<std::string> UrlDecode(std::string_view text, std::string_view operation);

}  // namespace bucketfs::s3
