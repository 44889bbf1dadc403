// Parsing of the two timestamp formats S3 speaks: ISO 8601 in XML bodies
// ("2009-10-12T17:50:30.000Z", milliseconds optional, "Z" or a numeric
// offset) and the HTTP date of headers such as Last-Modified (RFC 1123,
// "Wed, 21 Oct 2015 07:28:00 GMT"; RFC 850 and asctime forms are accepted
// too, as RFC 9110 asks of recipients). Pure functions, no locale, no tz db.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace bucketfs::s3 {

using SysTime = std::chrono::system_clock::time_point;

// nullopt when the text is not a valid timestamp.
std::optional<SysTime> ParseIso8601(std::string_view text);
std::optional<SysTime> ParseHttpDate(std::string_view text);

// "2009-10-12T17:50:30.000Z" (millisecond precision).
std::string FormatIso8601(SysTime t);
// "Mon, 12 Oct 2009 17:50:30 GMT".
std::string FormatHttpDate(SysTime t);

}  // namespace bucketfs::s3
