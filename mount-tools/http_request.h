// The little of HTTP/1.1 the metrics endpoint needs: the request line of a
// request head, and a complete response. Pure, unit-tested.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::tools {

struct HttpRequestLine {
  std::string method;
  std::string path;  // the target without its query string
};

// Parses the first line of `head` ("GET /metrics?x HTTP/1.1\r\n..."). Errors
// (EINVAL) for anything that is not METHOD SP TARGET SP HTTP/1.x.
Result<HttpRequestLine> ParseRequestLine(std::string_view head);

// "HTTP/1.1 <status> <reason>" with Content-Type, Content-Length and
// Connection: close; HEAD gets the headers without the body.
std::string HttpResponse(int status, std::string_view reason, std::string_view content_type,
                         std::string_view body, bool head_only = false);

// What the endpoint answers to a request head: /metrics (GET, HEAD) gets
// `render()`'s text, other paths 404, other methods 405, garbage 400.
std::string AnswerMetricsRequest(std::string_view head, const std::function<std::string()>& render);

}  // namespace bucketfs::tools
