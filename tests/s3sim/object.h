// Stored object values. Bodies are immutable and shared: a GET keeps a
// reference to the body it serves while a PUT of the same key installs a new
// one.
#ifndef TESTS_S3SIM_OBJECT_H_
#define TESTS_S3SIM_OBJECT_H_

#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/s3sim/body.h"
#include "tests/s3sim/http_message.h"

namespace s3sim {

struct Object {
  DataPtr data;
  std::string etag;  // quoted, as sent in the ETag header
  std::time_t mtime = 0;
  std::string content_type = "binary/octet-stream";
  HeaderList metadata;  // x-amz-meta-* (lower-case names) and other stored headers
};
using ObjectPtr = std::shared_ptr<const Object>;

// "\"<hex md5>\"".
std::string SinglePartEtag(std::string_view data);
std::string SinglePartEtag(const Body& data);
// "\"<hex md5 of the concatenated binary part MD5s>-N\"" (part_md5s are raw).
std::string MultipartEtag(const std::vector<std::string>& part_md5s);
// Strips surrounding quotes (clients send both forms).
std::string_view Unquote(std::string_view etag);

}  // namespace s3sim

#endif  // TESTS_S3SIM_OBJECT_H_
