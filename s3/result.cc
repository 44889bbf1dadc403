#include "s3/result.h"

namespace bucketfs {

std::string Error::ToString() const {
  std::string out = code.empty() ? std::string("Error") : code;
  if (http_status != 0) out += " (HTTP " + std::to_string(http_status) + ")";
  if (!message.empty()) out += ": " + message;
  if (!request_id.empty()) out += " [request id " + request_id + "]";
  return out;
}

Error MakeError(int errno_value, std::string code, std::string message) {
  Error e;
  e.errno_value = errno_value;
  e.code = std::move(code);
  e.message = std::move(message);
  return e;
}

}  // namespace bucketfs
