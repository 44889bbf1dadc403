// ParseByteSize: the one size parser of every flag and -o option that takes a
// byte count (--part-size, --memory-limit, `s3 bench --size`, ...).
#pragma once

#include <cstdint>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::tools {

// Digits, then an optional unit K, M, G or T (either case; powers of 1024),
// then an optional "B" or "iB": "4096", "4k", "4KiB", "8M", "8MB", "1G", "12B".
// A lower-case "b" after a unit ("8Mb") is refused: it reads as bits, and a
// size eight times off is worse than an error. Zero is allowed.
// Errors: EINVAL with a message that quotes the text and says what is wrong.
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace bucketfs::tools
