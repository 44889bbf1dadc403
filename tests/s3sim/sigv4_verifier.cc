#include "tests/s3sim/sigv4_verifier.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

AuthOutcome Fail(int status, std::string code, std::string message) {
  AuthOutcome out;
  out.status = status;
  out.code = std::move(code);
  out.message = std::move(message);
  return out;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    size_t next = s.find(sep, pos);
    out.emplace_back(s.substr(pos, next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return out;
}

// The signature inputs common to header and query authentication.
struct SignedParts {
  std::string access_key, date, region, service, terminal;
  std::string amz_date;
  std::string signed_headers;
  std::string signature;
  std::string payload_hash;
};

std::optional<AuthOutcome> CheckScope(const SignedParts& p, const AuthConfig& config,
                                      std::time_t now) {
  if (p.service != "s3" || p.terminal != "aws4_request" || p.date.size() != 8) {
    return Fail(400, "AuthorizationHeaderMalformed", "malformed credential scope");
  }
  if (!config.secrets.count(p.access_key)) {
    return Fail(403, "InvalidAccessKeyId",
                "The AWS Access Key Id you provided does not exist in our records.");
  }
  if (!config.region.empty() && p.region != config.region) {
    return Fail(400, "AuthorizationHeaderMalformed",
                "the region '" + p.region + "' is wrong; expecting '" + config.region + "'");
  }
  auto t = ParseAmzDate(p.amz_date);
  if (!t) return Fail(403, "AccessDenied", "AWS authentication requires a valid x-amz-date");
  if (p.amz_date.substr(0, 8) != p.date) {
    return Fail(403, "SignatureDoesNotMatch", "credential scope date differs from x-amz-date");
  }
  if (std::llabs(static_cast<long long>(*t - now)) > config.max_skew_seconds) {
    return Fail(403, "RequestTimeTooSkewed",
                "The difference between the request time and the current time is too large.");
  }
  return std::nullopt;
}

AuthOutcome CheckSignature(const HttpRequest& req, const SignedParts& p, const AuthConfig& config,
                           std::string_view skip_param) {
  std::vector<std::string> names = Split(p.signed_headers, ';');
  if (std::find(names.begin(), names.end(), "host") == names.end()) {
    return Fail(403, "AccessDenied", "the host header must be signed");
  }
  if (!std::is_sorted(names.begin(), names.end())) {
    return Fail(403, "SignatureDoesNotMatch", "SignedHeaders must be sorted");
  }
  // S3 rejects x-amz-* headers that the signature does not cover.
  for (const auto& [name, value] : req.headers) {
    if (name.rfind("x-amz-", 0) == 0 && name != "x-amz-content-sha256" &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      return Fail(403, "AccessDenied",
                  "There were headers present in the request which were not signed: " + name);
    }
  }
  auto query = CanonicalQueryString(req.raw_query, skip_param);
  if (!query) return Fail(400, "InvalidArgument", "malformed query string");
  std::string uri = req.raw_path.empty() ? "/" : req.raw_path;
  AuthOutcome out;
  out.canonical_request =
      CanonicalRequest(req.method, uri, *query, CanonicalHeaders(req.headers, names),
                       p.signed_headers, p.payload_hash);
  std::string scope = p.date + "/" + p.region + "/" + p.service + "/" + p.terminal;
  out.string_to_sign = StringToSign(p.amz_date, scope, out.canonical_request);
  std::string key = SigningKey(config.secrets.at(p.access_key), p.date, p.region, p.service);
  std::string expected = Hex(HmacSha256(key, out.string_to_sign));
  if (expected != p.signature) {
    out.status = 403;
    out.code = "SignatureDoesNotMatch";
    out.message =
        "The request signature we calculated does not match the signature you provided. "
        "Check your key and signing method.";
    return out;
  }
  out.ok = true;
  out.payload_hash = p.payload_hash;
  return out;
}

AuthOutcome VerifyHeaderAuth(const HttpRequest& req, const std::string& auth,
                             const AuthConfig& config, std::time_t now) {
  if (auth.rfind(kAlgorithm, 0) != 0 || auth.size() <= kAlgorithm.size() ||
      auth[kAlgorithm.size()] != ' ') {
    return Fail(400, "InvalidArgument", "Unsupported Authorization Type (only AWS4-HMAC-SHA256)");
  }
  SignedParts p;
  std::string credential;
  bool have_cred = false, have_sh = false, have_sig = false;
  for (const std::string& item : Split(std::string_view(auth).substr(kAlgorithm.size() + 1), ',')) {
    std::string_view kv = Trim(item, kSpaceOrTab);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) {
      return Fail(400, "AuthorizationHeaderMalformed", "malformed Authorization header");
    }
    std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "Credential") {
      credential = std::string(v);
      have_cred = true;
    } else if (k == "SignedHeaders") {
      p.signed_headers = std::string(v);
      have_sh = true;
    } else if (k == "Signature") {
      p.signature = std::string(v);
      have_sig = true;
    } else {
      return Fail(400, "AuthorizationHeaderMalformed", "unknown Authorization component");
    }
  }
  std::vector<std::string> cred = Split(credential, '/');
  if (!have_cred || !have_sh || !have_sig || cred.size() != 5) {
    return Fail(400, "AuthorizationHeaderMalformed", "malformed Authorization header");
  }
  p.access_key = cred[0];
  p.date = cred[1];
  p.region = cred[2];
  p.service = cred[3];
  p.terminal = cred[4];
  const std::string* amz_date = req.Header("x-amz-date");
  p.amz_date = amz_date ? *amz_date : "";
  if (auto bad = CheckScope(p, config, now)) return *bad;

  const std::string* hash = req.Header("x-amz-content-sha256");
  if (hash == nullptr) {
    return Fail(400, "InvalidRequest",
                "Missing required header for this request: x-amz-content-sha256");
  }
  if (hash->rfind("STREAMING-", 0) == 0) {
    return Fail(501, "NotImplemented", "s3sim does not implement aws-chunked uploads");
  }
  if (*hash != "UNSIGNED-PAYLOAD" && (hash->size() != 64 || !Unhex(*hash))) {
    return Fail(400, "InvalidArgument", "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or hex");
  }
  p.payload_hash = *hash;
  return CheckSignature(req, p, config, "");
}

AuthOutcome VerifyQueryAuth(const HttpRequest& req,
                            const std::vector<std::pair<std::string, std::string>>& params,
                            const AuthConfig& config, std::time_t now) {
  std::map<std::string, std::string> q(params.begin(), params.end());
  if (q["X-Amz-Algorithm"] != kAlgorithm) {
    return Fail(400, "AuthorizationQueryParametersError",
                "X-Amz-Algorithm must be " + std::string(kAlgorithm));
  }
  std::vector<std::string> cred = Split(q["X-Amz-Credential"], '/');
  auto expires = ParseU64(q["X-Amz-Expires"]);
  if (cred.size() != 5 || !expires || q["X-Amz-SignedHeaders"].empty() ||
      q["X-Amz-Signature"].empty()) {
    return Fail(400, "AuthorizationQueryParametersError", "malformed presigned parameters");
  }
  SignedParts p{cred[0],
                cred[1],
                cred[2],
                cred[3],
                cred[4],
                q["X-Amz-Date"],
                q["X-Amz-SignedHeaders"],
                q["X-Amz-Signature"],
                "UNSIGNED-PAYLOAD"};
  if (const std::string* hash = req.Header("x-amz-content-sha256")) p.payload_hash = *hash;
  if (auto bad = CheckScope(p, config, now)) {
    if (bad->code != "RequestTimeTooSkewed") return *bad;  // only expiry applies below
  }
  auto t = ParseAmzDate(p.amz_date);
  if (now > *t + static_cast<std::time_t>(*expires)) {
    return Fail(403, "AccessDenied", "Request has expired");
  }
  return CheckSignature(req, p, config, "X-Amz-Signature");
}

}  // namespace

std::optional<std::string> CanonicalQueryString(std::string_view raw_query, std::string_view skip) {
  auto params = ParseQuery(raw_query);
  if (!params) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> enc;
  for (const auto& [k, v] : *params) {
    if (!skip.empty() && k == skip) continue;
    enc.emplace_back(UriEncode(k), UriEncode(v));
  }
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

std::string CanonicalHeaders(const HeaderList& headers, const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    std::string value;
    bool first = true;
    for (const auto& [k, v] : headers) {
      if (k != name) continue;
      if (!first) value += ',';
      first = false;
      // Trim and collapse runs of spaces into one.
      std::string_view t = Trim(v, kSpaceOrTab);
      for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] == ' ' && i > 0 && t[i - 1] == ' ') continue;
        value += t[i];
      }
    }
    out += name + ":" + value + "\n";
  }
  return out;
}

std::string CanonicalRequest(std::string_view method, std::string_view canonical_uri,
                             std::string_view canonical_query, std::string_view canonical_headers,
                             std::string_view signed_headers, std::string_view payload_hash) {
  std::string out;
  out.append(method).append("\n");
  out.append(canonical_uri).append("\n");
  out.append(canonical_query).append("\n");
  out.append(canonical_headers).append("\n");
  out.append(signed_headers).append("\n");
  out.append(payload_hash);
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  std::string out(kAlgorithm);
  out.append("\n").append(amz_date).append("\n").append(scope).append("\n");
  out.append(Hex(Sha256(canonical_request)));
  return out;
}

std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string k = HmacSha256("AWS4" + std::string(secret), date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  return HmacSha256(k, "aws4_request");
}

AuthOutcome VerifyRequest(const HttpRequest& req, const AuthConfig& config, std::time_t now) {
  if (const std::string* auth = req.Header("authorization")) {
    return VerifyHeaderAuth(req, *auth, config, now);
  }
  auto params = ParseQuery(req.raw_query);
  if (!params) return Fail(400, "InvalidArgument", "malformed query string");
  for (const auto& [k, v] : *params) {
    if (k == "X-Amz-Algorithm") return VerifyQueryAuth(req, *params, config, now);
  }
  if (config.anonymous_ok) {
    AuthOutcome out;
    out.ok = true;
    out.anonymous = true;
    if (const std::string* hash = req.Header("x-amz-content-sha256")) out.payload_hash = *hash;
    return out;
  }
  return Fail(403, "AccessDenied", "Anonymous access is not allowed");
}

}  // namespace s3sim
