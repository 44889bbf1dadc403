// ObjectVersion: one version of one object, as a reader saw it at open, and
// the ranged GET pinned to it. Every read of an open file names the ETag seen
// at open (If-Match), so a changed object fails the read (EIO) instead of
// mixing two versions.
#pragma once

#include <cstdint>
#include <string>

#include "s3/object_client.h"

namespace bucketfs::s3 {

struct ObjectVersion {
  std::string bucket;
  std::string key;
  std::string etag;  // as the server sent it; empty when the store gave none
  uint64_t size = 0;
};

// The GET of [offset, offset + length) of `version`, with If-Match: its ETag
// (none when the store gave no ETag: there is nothing to pin).
GetObjectParams PinnedRangeGet(const ObjectVersion& version, uint64_t offset, uint64_t length);

}  // namespace bucketfs::s3
