// String helpers every layer shares, so that one rule (what counts as
// whitespace at the edges of a header, an XML value, a config line) is
// written once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bucketfs::base {

// The characters std::isspace accepts in the C locale.
inline constexpr std::string_view kWhitespace = " \t\n\v\f\r";
// HTTP's optional whitespace (RFC 9110 OWS): space and horizontal tab only.
inline constexpr std::string_view kSpaceOrTab = " \t";

// `s` without its leading and trailing characters from `chars`.
std::string_view Trim(std::string_view s, std::string_view chars = kWhitespace);

// The pieces of `s` between `delim`s, empty ones included, except that a
// final delimiter ends the last piece rather than starting an empty one
// ("a,,b," -> {"a", "", "b"}; "" -> {}): lists written one item per line,
// or NUL-terminated as in /proc.
std::vector<std::string_view> Split(std::string_view s, char delim);

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF): what S3 requires of every key.
bool IsUtf8(std::string_view s);

// The value of one hexadecimal digit (either case), or -1 for any other character.
int HexDigitValue(char c);

// `bytes` as lowercase hexadecimal, two digits per byte (digests, ETags).
std::string HexLower(std::string_view bytes);

}  // namespace bucketfs::base
