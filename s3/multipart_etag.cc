#include "s3/multipart_etag.h"

#include <openssl/evp.h>

#include <cctype>
#include <cstdint>

namespace bucketfs::s3 {
namespace {

std::string_view Unquoted(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    return etag.substr(1, etag.size() - 2);
  }
  return etag;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 16 bytes of a plain MD5 ETag appended to `out`; false if it is not one.
bool AppendMd5Bytes(std::string_view etag, std::string& out) {
  const std::string_view hex = Unquoted(etag);
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexDigit(hex[i]);
    const int lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return true;
}

}  // namespace

std::optional<std::string> ExpectedMultipartEtag(const std::vector<CompletedPart>& parts) {
  if (parts.empty()) return std::nullopt;
  std::string digests;
  digests.reserve(parts.size() * 16);
  for (const CompletedPart& part : parts) {
    if (!AppendMd5Bytes(part.etag, digests)) return std::nullopt;
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (EVP_Digest(digests.data(), digests.size(), md, &md_len, EVP_md5(), nullptr) != 1) {
    return std::nullopt;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * md_len + 8);
  for (unsigned int i = 0; i < md_len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 0xf]);
  }
  out += '-' + std::to_string(parts.size());
  return out;
}

bool SameEtag(std::string_view a, std::string_view b) {
  a = Unquoted(a);
  b = Unquoted(b);
  if (a.empty() || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace bucketfs::s3
