#include "s3/http_transport.h"

#include <strings.h>

namespace bucketfs::s3 {

const std::string* FindHeader(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), name.size()) == 0) {
      return &v;
    }
  }
  return nullptr;
}

Error MakeTransportError(std::string_view code, std::string message) {
  const bool timed_out = code == transport_code::kTimeout || code == transport_code::kStalled;
  Error e = MakeError(timed_out ? ETIMEDOUT : EIO, std::string(code), std::move(message));
  e.retryable = code != transport_code::kAborted && code != transport_code::kShutdown;
  return e;
}

}  // namespace bucketfs::s3
