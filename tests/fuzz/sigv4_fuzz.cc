// Fuzz target: SigV4 canonicalisation (s3/sigv4_signer.h) with every input
// the caller controls taken from the fuzzer: method, path, query, headers,
// keys, region. Checked: UriEncode emits only unreserved characters and %XX
// and decodes back to its input; signing is deterministic; the signature is
// 64 hex digits; the secret key never appears in anything the signer returns
// (the headers it adds go on the wire and into request logs).
#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "s3/sigv4_signer.h"

using namespace bucketfs;      // NOLINT(google-build-using-namespace)
using namespace bucketfs::s3;  // NOLINT(google-build-using-namespace)

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

bool Unreserved(char c, bool slash_ok) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~' || (slash_ok && c == '/');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void CheckUriEncode(const std::string& in, bool encode_slash) {
  const std::string out = UriEncode(in, encode_slash);
  std::string back;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '%') {
      Check(i + 2 < out.size() && HexValue(out[i + 1]) >= 0 && HexValue(out[i + 2]) >= 0);
      back.push_back(static_cast<char>(HexValue(out[i + 1]) * 16 + HexValue(out[i + 2])));
      i += 2;
    } else {
      Check(Unreserved(out[i], !encode_slash));
      back.push_back(out[i]);
    }
  }
  Check(back == in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  SigningRequest req;
  req.method = fdp.ConsumeRandomLengthString(16);
  req.canonical_uri = "/" + fdp.ConsumeRandomLengthString(256);
  const int queries = fdp.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < queries; ++i) {
    std::string k = fdp.ConsumeRandomLengthString(32);
    req.query.emplace_back(std::move(k), fdp.ConsumeRandomLengthString(64));
  }
  req.headers.emplace_back("host", fdp.ConsumeRandomLengthString(64));
  const int headers = fdp.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < headers; ++i) {
    std::string k = fdp.ConsumeRandomLengthString(32);
    req.headers.emplace_back(std::move(k), fdp.ConsumeRandomLengthString(64));
  }
  req.payload_hash = fdp.ConsumeBool() ? std::string(kUnsignedPayload) : Sha256Hex("x");
  Credentials creds;
  creds.access_key_id = fdp.ConsumeRandomLengthString(32);
  // A secret no other input can spell by chance: a fixed marker plus bytes.
  creds.secret_access_key = "Zq7#secret#" + fdp.ConsumeRandomLengthString(40);
  if (fdp.ConsumeBool()) creds.session_token = fdp.ConsumeRandomLengthString(64);
  SigningContext ctx;
  ctx.region = fdp.ConsumeRandomLengthString(24);
  ctx.add_content_sha256_header = fdp.ConsumeBool();
  ctx.now = std::chrono::system_clock::time_point(
      std::chrono::seconds(fdp.ConsumeIntegralInRange<int64_t>(0, 7'000'000'000)));

  for (const auto& [k, v] : req.query) {
    CheckUriEncode(k, true);
    CheckUriEncode(v, false);
  }
  CheckUriEncode(fdp.ConsumeRemainingBytesAsString(), true);

  const SignedRequestParts a = SignV4(req, creds, ctx);
  const SignedRequestParts b = SignV4(req, creds, ctx);
  Check(a.signature == b.signature && a.canonical_request == b.canonical_request);
  Check(a.signature.size() == 64);
  for (char c : a.signature) Check((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  const std::string& secret = creds.secret_access_key;
  // Skipped when another input spells the secret (it then appears legitimately).
  std::string others =
      req.method + req.canonical_uri + creds.access_key_id + creds.session_token + ctx.region;
  for (const auto& [k, v] : req.query) others += k + "\n" + v + "\n";
  for (const auto& [k, v] : req.headers) others += k + "\n" + v + "\n";
  if (others.find("Zq7#secret#") != std::string::npos) return 0;
  Check(a.canonical_request.find(secret) == std::string::npos);
  Check(a.string_to_sign.find(secret) == std::string::npos);
  Check(a.authorization.find(secret) == std::string::npos);
  for (const auto& [k, v] : a.headers_to_add) Check(v.find(secret) == std::string::npos);
  return 0;
}
