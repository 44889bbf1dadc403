// AWS Signature Version 4, header-based, as a pure function.
//
// Everything that varies is passed in (credentials, region, service, clock,
// payload hash), and the intermediate canonical request and string-to-sign
// are returned so tests compare them with AWS's published examples. The
// signer does no I/O; its only state is per thread and invisible in the
// results: the last signing key derived and an HMAC context (sigv4_signer.cc).
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/credentials.h"
#include "s3/http_transport.h"

namespace bucketfs::s3 {

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// SHA-256 of the empty string, hex.
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct SigningRequest {
  std::string method;
  // The path exactly as sent on the wire, already percent-encoded
  // (S3 does not normalize or double-encode it).
  std::string canonical_uri;
  // Query parameters, NOT encoded; the signer encodes and sorts them.
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to sign; must include "host". Names are lowercased and values
  // trimmed by the signer.
  HttpHeaders headers;
  // Hex SHA-256 of the body, or kUnsignedPayload.
  std::string payload_hash;
};

struct SigningContext {
  std::string region;
  std::string service = "s3";
  std::chrono::system_clock::time_point now;
  // S3 requires x-amz-content-sha256 (and signs it). Other services, AWS's
  // generic test suite and curl's own signer do not send it: false signs
  // exactly the given headers plus x-amz-date (and the session token).
  bool add_content_sha256_header = true;
};

struct SignedRequestParts {
  std::string amz_date;  // 20150830T123600Z
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;      // hex
  std::string authorization;  // the Authorization header value
  // Headers to add to the request: x-amz-date, x-amz-content-sha256,
  // x-amz-security-token (when a session token is set), Authorization.
  HttpHeaders headers_to_add;
};

// REQUIRES: !credentials.anonymous
// Signs with x-amz-date and x-amz-content-sha256 (and x-amz-security-token)
// included among the signed headers.
SignedRequestParts SignV4(const SigningRequest& request, const Credentials& credentials,
                          const SigningContext& context);

// The pieces of the signing process, exposed for tests and for callers that
// build presigned URLs later. All are pure.
std::string FormatAmzDate(std::chrono::system_clock::time_point now);  // 20150830T123600Z
// "Param1=value1&Param2=value2": each key and value UriEncode'd
// (encode_slash=true), sorted by encoded key, then by encoded value.
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);
// kSigningKey = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request"),
// returned as raw bytes (32).
std::string DeriveSigningKey(std::string_view secret_access_key, std::string_view date8,
                             std::string_view region, std::string_view service);

// RFC 3986 encoding as SigV4 defines it: unreserved characters
// (A-Z a-z 0-9 - _ . ~) pass through, everything else is %XX uppercase;
// '/' passes through unless encode_slash.
std::string UriEncode(std::string_view input, bool encode_slash);

// Hex-encoded SHA-256 (lowercase).
std::string Sha256Hex(std::span<const std::byte> data);
std::string Sha256Hex(std::string_view data);
// Base64 of the MD5 digest: the Content-MD5 header value for UNSIGNED-PAYLOAD bodies.
std::string Md5Base64(std::span<const std::byte> data);

}  // namespace bucketfs::s3
