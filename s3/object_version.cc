#include "s3/object_version.h"

namespace bucketfs::s3 {

GetObjectParams PinnedRangeGet(const ObjectVersion& version, uint64_t offset, uint64_t length) {
  GetObjectParams p;
  p.bucket = version.bucket;
  p.key = version.key;
  p.offset = offset;
  p.length = length;
  p.if_match = version.etag;
  return p;
}

}  // namespace bucketfs::s3
