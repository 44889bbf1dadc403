// Typed parsers of the HTTP header values the S3 client reads as numbers:
// Content-Length and Content-Range. One parser each, shared by the executor
// (which checks that a ranged answer is the range asked for) and the typed
// operations (which report the object's size).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bucketfs::s3 {

// A decimal number, surrounding whitespace allowed; nullopt when it is not
// one (empty, a sign, other characters, or past uint64_t).
std::optional<uint64_t> ParseHeaderNumber(std::string_view value);

// "bytes first-last/total"; total is "*" when the server does not know it.
struct ContentRange {
  uint64_t first = 0, last = 0;
  std::optional<uint64_t> total;
};
// nullopt when malformed, when last < first, or when last is past the total.
std::optional<ContentRange> ParseContentRange(std::string_view value);

}  // namespace bucketfs::s3
