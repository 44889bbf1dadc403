// s3sim utilities: hashing (OpenSSL), hex/base64, S3 URI encoding and HTTP
// dates. Pure functions, no state; shared by the verifier, store and handlers.
#ifndef TESTS_S3SIM_UTIL_H_
#define TESTS_S3SIM_UTIL_H_

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "base/strings.h"

namespace s3sim {

// HTTP fields and the values s3sim parses are trimmed of space and tab only
// (RFC 9110 OWS), stricter than the client: Trim(s, kSpaceOrTab).
using bucketfs::base::kSpaceOrTab;
using bucketfs::base::Trim;

std::string Md5(std::string_view data);                               // raw 16 bytes
std::string Sha256(std::string_view data);                            // raw 32 bytes
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string Hex(std::string_view raw);                                // lowercase
std::optional<std::string> Unhex(std::string_view hex);
std::string Base64(std::string_view raw);
std::optional<std::string> Unbase64(std::string_view b64);

// AWS UriEncode: every byte except A-Z a-z 0-9 - . _ ~ becomes %XX (upper
// case hex); '/' is kept when encode_slash is false.
std::string UriEncode(std::string_view s, bool encode_slash = true);
// Percent-decoding; returns nullopt on a malformed escape. '+' is kept as is
// (S3 paths and SigV4 queries do not use form encoding).
std::optional<std::string> UriDecode(std::string_view s);

std::string ToLower(std::string_view s);

std::string HttpDate(std::time_t t);  // RFC 1123: "Tue, 15 Nov 1994 08:12:31 GMT"
std::string IsoDate(std::time_t t);   // "2009-10-12T17:50:30.000Z" (XML listings)
// Parses "20130524T000000Z" (ISO 8601 basic) into UTC seconds.
std::optional<std::time_t> ParseAmzDate(std::string_view s);

// Parses a decimal unsigned integer that must fill the whole string.
std::optional<uint64_t> ParseU64(std::string_view s);

bool IsValidUtf8(std::string_view s);

// Resizes s to n bytes for use as a large object buffer: the memory is
// reserved first and advised for transparent huge pages before it is first
// touched, which cuts page faults and TLB misses (costly in VMs) ~500-fold.
void ResizeLargeBuffer(std::string& s, size_t n);

}  // namespace s3sim

#endif  // TESTS_S3SIM_UTIL_H_
