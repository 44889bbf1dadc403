// Header, digest and validation helpers shared by the ObjectClient files.
#include <openssl/evp.h>

#include <cctype>

#include "s3/crc32c.h"
#include "s3/http_header_values.h"
#include "s3/object_client_impl.h"
#include "s3/sigv4_signer.h"
#include "s3/time_util.h"

namespace bucketfs::s3::object_client_internal {

std::string ContentMd5(std::span<const std::byte> data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  // EVP (not the deprecated MD5()): one call, no context kept.
  if (EVP_Digest(data.data(), data.size(), digest, &digest_len, EVP_md5(), nullptr) != 1) {
    return "";
  }
  unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(b64, digest, static_cast<int>(digest_len));
  return std::string(reinterpret_cast<const char*>(b64), static_cast<size_t>(n));
}

void AddChecksumHeader(S3Request& req, BodyChecksum checksum, std::span<const std::byte> body) {
  switch (checksum) {
    case BodyChecksum::kNone:
      return;
    case BodyChecksum::kMd5:
      req.headers.emplace_back("Content-MD5", ContentMd5(body));
      return;
    case BodyChecksum::kCrc32c:
      req.headers.emplace_back(std::string(kCrc32cHeader), Crc32cBase64(body));
      return;
  }
}

std::span<const std::byte> AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string CopySource(std::string_view bucket, std::string_view key) {
  std::string path = "/";
  path += bucket;
  path += '/';
  path += key;
  return UriEncode(path, /*encode_slash=*/false);
}

void AddUserMetadata(S3Request& req, const UserMetadata& metadata) {
  for (const auto& [name, value] : metadata) req.headers.emplace_back("x-amz-meta-" + name, value);
}

UserMetadata UserMetadataOf(const HttpHeaders& headers) {
  constexpr std::string_view kPrefix = "x-amz-meta-";
  UserMetadata out;
  for (const auto& [name, value] : headers) {
    if (name.size() <= kPrefix.size()) continue;
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    out[lower.substr(kPrefix.size())] = value;
  }
  return out;
}

std::string HeaderOr(const HttpHeaders& headers, std::string_view name) {
  const std::string* v = FindHeader(headers, name);
  return v ? *v : std::string();
}

std::optional<uint64_t> ContentLength(const HttpHeaders& headers) {
  const std::string* v = FindHeader(headers, "Content-Length");
  if (!v) return std::nullopt;
  return ParseHeaderNumber(*v);
}

Timestamp LastModified(const HttpHeaders& headers) {
  const std::string* v = FindHeader(headers, "Last-Modified");
  if (!v) return Timestamp{};
  return ParseHttpDate(*v).value_or(Timestamp{});
}

Error InvalidArgument(std::string_view operation, std::string_view what) {
  return MakeError(EINVAL, "InvalidArgument", std::string(operation) + ": " + std::string(what));
}

Status CheckBucketKey(std::string_view operation, std::string_view bucket, std::string_view key) {
  if (bucket.empty()) return InvalidArgument(operation, "empty bucket name");
  if (key.empty()) return InvalidArgument(operation, "empty key");
  return Status::Ok();
}

}  // namespace bucketfs::s3::object_client_internal
