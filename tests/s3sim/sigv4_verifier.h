// SigV4 request verification for s3sim, written from the AWS S3 API reference
// ("Authenticating Requests (AWS Signature Version 4)"), independently of the
// client's signer. Supports the Authorization header (signed hex payload hash
// or UNSIGNED-PAYLOAD) and presigned query parameters.
//
// The building blocks (canonical query, canonical request, string to sign,
// signing key) are exposed so that tests can check them against the worked
// examples in the AWS documentation.
#ifndef TESTS_S3SIM_SIGV4_VERIFIER_H_
#define TESTS_S3SIM_SIGV4_VERIFIER_H_

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/s3sim/http_message.h"

namespace s3sim {

struct AuthConfig {
  std::map<std::string, std::string> secrets;  // access key -> secret key
  bool anonymous_ok = false;                   // accept requests without any signature
  std::string region;                          // empty: accept any region in the scope
  int max_skew_seconds = 15 * 60;
};

struct AuthOutcome {
  bool ok = false;
  bool anonymous = false;
  int status = 0;  // HTTP status when !ok
  std::string code;
  std::string message;
  std::string payload_hash;  // x-amz-content-sha256 value ("" when anonymous)
  // For SignatureDoesNotMatch, echoed in the error body as S3 does.
  std::string canonical_request;
  std::string string_to_sign;
};

// Canonical query string: parameters decoded, re-encoded with UriEncode,
// sorted by name then value, joined by '&'. `skip` names a parameter to leave
// out (X-Amz-Signature for presigned URLs). nullopt on malformed escapes.
std::optional<std::string> CanonicalQueryString(std::string_view raw_query,
                                                std::string_view skip = {});

// Canonical headers block ("name:value\n" per signed header) for the signed
// header names given (lower case, in the order given).
std::string CanonicalHeaders(const HeaderList& headers, const std::vector<std::string>& names);

std::string CanonicalRequest(std::string_view method, std::string_view canonical_uri,
                             std::string_view canonical_query, std::string_view canonical_headers,
                             std::string_view signed_headers, std::string_view payload_hash);

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service);

// Verifies `req` (its head; the payload hash is checked against the body
// later by the caller) at time `now`.
AuthOutcome VerifyRequest(const HttpRequest& req, const AuthConfig& config, std::time_t now);

}  // namespace s3sim

#endif  // TESTS_S3SIM_SIGV4_VERIFIER_H_
