// SigV4 header signing: canonical request -> string to sign -> HMAC chain.
// See sigv4_signer.h. Pure functions over OpenSSL's one-shot digests.
#include "s3/sigv4_signer.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <memory>

#include "base/strings.h"

namespace bucketfs::s3 {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

std::string Digest(const EVP_MD* md, const void* data, size_t size) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  // One-shot digest of in-memory data cannot fail short of memory
  // exhaustion; an empty result would then make the signature mismatch.
  if (EVP_Digest(data, size, out, &out_len, md, nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(out), out_len);
}

// SHA-256 fetched once: EVP_sha256() and HMAC() look the algorithm up in the
// provider tables on every call (locks and allocations, 2-3 us a signature).
const EVP_MD* Sha256Md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md != nullptr ? md : EVP_sha256();
}

struct MacCtxDeleter {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// A per-thread HMAC-SHA256 context, its digest set once; null if OpenSSL
// cannot make one (HmacSha256 then takes the one-shot path).
EVP_MAC_CTX* ThreadHmacCtx() {
  thread_local std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter> ctx = [] {
    std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter> c;
    EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac == nullptr) return c;
    c.reset(EVP_MAC_CTX_new(mac));
    EVP_MAC_free(mac);  // the context holds its own reference
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (c && EVP_MAC_CTX_set_params(c.get(), params) != 1) c.reset();
    return c;
  }();
  return ctx.get();
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  const auto* d = reinterpret_cast<const unsigned char*>(data.data());
  if (EVP_MAC_CTX* ctx = ThreadHmacCtx()) {
    size_t len = 0;
    if (EVP_MAC_init(ctx, k, key.size(), nullptr) == 1 &&
        EVP_MAC_update(ctx, d, data.size()) == 1 &&
        EVP_MAC_final(ctx, out, &len, sizeof(out)) == 1) {
      return std::string(reinterpret_cast<const char*>(out), len);
    }
    return {};
  }
  unsigned int out_len = 0;
  if (HMAC(Sha256Md(), k, static_cast<int>(key.size()), d, data.size(), out, &out_len) == nullptr) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(out), out_len);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Trims leading/trailing whitespace and collapses inner runs to one space.
std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

// Headers the signer owns: a caller's copy is replaced, never signed twice.
bool IsSignerOwned(const std::string& lower_name) {
  return lower_name == "x-amz-date" || lower_name == "x-amz-content-sha256" ||
         lower_name == "x-amz-security-token" || lower_name == "authorization";
}

}  // namespace

std::string UriEncode(std::string_view input, bool encode_slash) {
  std::string out;
  out.reserve(input.size() * 3 / 2);
  for (char ch : input) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~' ||
        (c == '/' && !encode_slash)) {
      out.push_back(ch);
    } else {
      constexpr char kUpper[] = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(kUpper[c >> 4]);
      out.push_back(kUpper[c & 0xf]);
    }
  }
  return out;
}

std::string Sha256Hex(std::span<const std::byte> data) {
  const std::string digest = Digest(Sha256Md(), data.data(), data.size());
  return base::HexLower(digest);
}

std::string Sha256Hex(std::string_view data) {
  return Sha256Hex(std::as_bytes(std::span<const char>(data.data(), data.size())));
}

std::string Md5Base64(std::span<const std::byte> data) {
  const std::string digest = Digest(EVP_md5(), data.data(), data.size());
  unsigned char out[64];
  const int n = EVP_EncodeBlock(out, reinterpret_cast<const unsigned char*>(digest.data()),
                                static_cast<int>(digest.size()));
  return std::string(reinterpret_cast<const char*>(out), n > 0 ? static_cast<size_t>(n) : 0);
}

std::string FormatAmzDate(std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf, n);
}

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query) encoded.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out.push_back('&');
    out += k;
    out.push_back('=');
    out += v;
  }
  return out;
}

std::string DeriveSigningKey(std::string_view secret_access_key, std::string_view date8,
                             std::string_view region, std::string_view service) {
  std::string key = "AWS4";
  key += secret_access_key;
  std::string k = HmacSha256(key, date8);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  return HmacSha256(k, "aws4_request");
}

namespace {

// The signing key changes once a day (per secret, region and service), and
// deriving it is four of the five HMACs of a signature, a cost paid on every
// small random read. Each thread keeps the
// last key it derived, so no lock is taken and the signature stays a pure
// function of the inputs.
const std::string& CachedSigningKey(std::string_view secret, std::string_view date8,
                                    std::string_view region, std::string_view service) {
  struct Memo {
    std::string secret, date8, region, service, key;
  };
  thread_local Memo memo;
  if (memo.key.empty() || memo.date8 != date8 || memo.secret != secret || memo.region != region ||
      memo.service != service) {
    memo.key = DeriveSigningKey(secret, date8, region, service);
    memo.secret = secret;
    memo.date8 = date8;
    memo.region = region;
    memo.service = service;
  }
  return memo.key;
}

}  // namespace

SignedRequestParts SignV4(const SigningRequest& request, const Credentials& credentials,
                          const SigningContext& context) {
  SignedRequestParts parts;
  parts.amz_date = FormatAmzDate(context.now);
  const std::string date8 = parts.amz_date.substr(0, 8);

  // Canonical headers: lowercase names, duplicate names joined by ',' in the
  // order given, values trimmed and inner whitespace collapsed; std::map sorts.
  std::map<std::string, std::string> canonical;
  for (const auto& [name, value] : request.headers) {
    std::string lower = ToLower(name);
    if (IsSignerOwned(lower)) continue;
    auto [it, inserted] = canonical.try_emplace(std::move(lower), CanonicalHeaderValue(value));
    if (!inserted) {
      it->second.push_back(',');
      it->second += CanonicalHeaderValue(value);
    }
  }
  canonical["x-amz-date"] = parts.amz_date;
  parts.headers_to_add.emplace_back("x-amz-date", parts.amz_date);
  if (context.add_content_sha256_header) {
    canonical["x-amz-content-sha256"] = request.payload_hash;
    parts.headers_to_add.emplace_back("x-amz-content-sha256", request.payload_hash);
  }
  if (!credentials.session_token.empty()) {
    canonical["x-amz-security-token"] = CanonicalHeaderValue(credentials.session_token);
    parts.headers_to_add.emplace_back("x-amz-security-token", credentials.session_token);
  }

  std::string signed_headers;
  std::string canonical_headers;
  for (const auto& [name, value] : canonical) {
    if (!signed_headers.empty()) signed_headers.push_back(';');
    signed_headers += name;
    canonical_headers += name;
    canonical_headers.push_back(':');
    canonical_headers += value;
    canonical_headers.push_back('\n');
  }

  std::string& creq = parts.canonical_request;
  creq.reserve(256 + canonical_headers.size());
  creq += request.method;
  creq.push_back('\n');
  creq += request.canonical_uri.empty() ? std::string("/") : request.canonical_uri;
  creq.push_back('\n');
  creq += CanonicalQueryString(request.query);
  creq.push_back('\n');
  creq += canonical_headers;
  creq.push_back('\n');
  creq += signed_headers;
  creq.push_back('\n');
  creq += request.payload_hash;

  const std::string scope = date8 + "/" + context.region + "/" + context.service + "/aws4_request";
  std::string& sts = parts.string_to_sign;
  sts += kAlgorithm;
  sts.push_back('\n');
  sts += parts.amz_date;
  sts.push_back('\n');
  sts += scope;
  sts.push_back('\n');
  sts += Sha256Hex(creq);

  const std::string raw_signature = HmacSha256(
      CachedSigningKey(credentials.secret_access_key, date8, context.region, context.service), sts);
  parts.signature = base::HexLower(raw_signature);

  parts.authorization = std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" +
                        scope + ", SignedHeaders=" + signed_headers +
                        ", Signature=" + parts.signature;
  parts.headers_to_add.emplace_back("Authorization", parts.authorization);
  return parts;
}

}  // namespace bucketfs::s3
