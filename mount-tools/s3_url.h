// S3Url: the `s3://bucket/key` form every `bucketfs s3` subcommand takes, and
// the byte-size suffixes of its flags ("8M", "1G", "4KiB").
//
// Parsing is strict: the scheme must be "s3://", the bucket non-empty and
// free of '/'; the key is everything after the first '/' after the bucket,
// kept byte for byte (spaces, '+', '%', '?', '#' and unicode are literal key
// characters here, never URL syntax).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::tools {

struct S3Url {
  std::string bucket;
  std::string key;  // may be empty ("s3://bucket" or "s3://bucket/")

  std::string ToString() const;  // "s3://bucket/key"
};

// REQUIRES: nothing; returns EINVAL errors naming what is wrong.
Result<S3Url> ParseS3Url(std::string_view text);

// "1.5 GiB", "512 B": for humans (progress bar, summaries).
std::string FormatBytes(uint64_t bytes);

}  // namespace bucketfs::tools
