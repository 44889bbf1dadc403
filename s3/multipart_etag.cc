#include "s3/multipart_etag.h"

#include <openssl/evp.h>

#include <cctype>
#include <cstdint>

#include "base/strings.h"

namespace bucketfs::s3 {
namespace {

std::string_view Unquoted(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    return etag.substr(1, etag.size() - 2);
  }
  return etag;
}

// The 16 bytes of a plain MD5 ETag appended to `out`; false if it is not one.
bool AppendMd5Bytes(std::string_view etag, std::string& out) {
  const std::string_view hex = Unquoted(etag);
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = base::HexDigitValue(hex[i]);
    const int lo = base::HexDigitValue(hex[i + 1]);
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
  std::string out = base::HexLower(std::string_view(reinterpret_cast<const char*>(md), md_len));
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
