// The ETag a store gives the object a CompleteMultipartUpload makes, where it
// can be known in advance: AWS and the stores that copy it (MinIO, Ceph RGW,
// s3sim) name a multipart object by the MD5 of its parts' binary MD5s and the
// part count ("<hex>-N"). It is how a client recognises, after a lost answer,
// that its own earlier Complete made the object: the upload is gone
// (NoSuchUpload), and only these parts' bytes give this ETag.
#ifndef S3_MULTIPART_ETAG_H_
#define S3_MULTIPART_ETAG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "s3/object_client.h"

namespace bucketfs::s3 {

// "<hex md5 of the parts' md5s>-<count>" (no quotes); nullopt when a part's
// ETag is not a plain MD5 (32 hex digits, quoted or not): then the store's
// naming cannot be predicted and no comparison can prove anything.
std::optional<std::string> ExpectedMultipartEtag(const std::vector<CompletedPart>& parts);

// Whether two ETags name the same value: quotes and hex case ignored.
bool SameEtag(std::string_view a, std::string_view b);

}  // namespace bucketfs::s3

#endif  // S3_MULTIPART_ETAG_H_
