// HTTP/1.1 request and response values passed between the connection loop
// (http_server) and the S3 application (s3_app). A response body is either a
// small owned string (XML) or a slice of a shared, immutable object body, so
// a GET of a large object never copies it: the response holds a reference and
// a concurrent PUT only swaps the store's pointer.
#ifndef TESTS_S3SIM_HTTP_MESSAGE_H_
#define TESTS_S3SIM_HTTP_MESSAGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/s3sim/body.h"

namespace s3sim {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;
  std::string target;     // request-target exactly as sent
  std::string raw_path;   // target before '?', still percent-encoded
  std::string raw_query;  // target after '?', still percent-encoded
  int minor_version = 1;
  HeaderList headers;  // names lower-cased, values trimmed, in arrival order
  std::string body;

  // First header with this lower-case name, or nullptr.
  const std::string* Header(std::string_view name) const;
};

// Parses the request line and headers (the bytes before the blank line,
// without it). Returns nullopt when malformed.
std::optional<HttpRequest> ParseRequestHead(std::string_view head);

// Decoded query parameters in order of appearance; "a" and "a=" both give "".
// Returns nullopt on malformed percent escapes.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    std::string_view raw_query);

// What the connection loop should do to the body of a response on purpose.
struct BodyFault {
  enum class Kind { kNone, kReset, kTruncate, kStall };
  Kind kind = Kind::kNone;
  uint64_t cut_at = 0;  // bytes of the body sent before the fault
};

struct HttpResponse {
  int status = 200;
  HeaderList headers;  // without Content-Length / Connection / Date (the server adds them)
  std::string body;
  DataPtr data;  // when set, the body is data[offset, offset+length)
  uint64_t data_offset = 0;
  uint64_t data_length = 0;
  bool head_only = false;  // HEAD: announce the length, send no body
  bool close = false;      // close the connection after this response
  bool counted = false;    // an S3 request the app counts in flight until Sent()
  BodyFault fault;

  uint64_t BodyLength() const { return data ? data_length : body.size(); }
  void AddHeader(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

const char* ReasonPhrase(int status);

}  // namespace s3sim

#endif  // TESTS_S3SIM_HTTP_MESSAGE_H_
