#include "mount-tools/http_request.h"

#include <cerrno>

#include "metrics/text_format.h"

namespace bucketfs::tools {

Result<HttpRequestLine> ParseRequestLine(std::string_view head) {
  const size_t eol = head.find("\r\n");
  if (eol == std::string_view::npos) return MakeError(EINVAL, "BadRequest", "no request line");
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1 ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return MakeError(EINVAL, "BadRequest", "not METHOD TARGET VERSION");
  }
  const std::string_view version = line.substr(sp2 + 1);
  if (!version.starts_with("HTTP/1.")) return MakeError(EINVAL, "BadRequest", "not HTTP/1.x");
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (!target.starts_with('/')) return MakeError(EINVAL, "BadRequest", "target is not a path");
  if (size_t q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  return HttpRequestLine{std::string(line.substr(0, sp1)), std::string(target)};
}

std::string HttpResponse(int status, std::string_view reason, std::string_view content_type,
                         std::string_view body, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

std::string AnswerMetricsRequest(std::string_view head,
                                 const std::function<std::string()>& render) {
  auto line = ParseRequestLine(head);
  if (!line.ok()) return HttpResponse(400, "Bad Request", "text/plain", "bad request\n");
  const bool head_only = line->method == "HEAD";
  if (line->method != "GET" && !head_only) {
    return HttpResponse(405, "Method Not Allowed", "text/plain", "only GET\n");
  }
  if (line->path != "/metrics") {
    return HttpResponse(404, "Not Found", "text/plain", "not found: try /metrics\n", head_only);
  }
  return HttpResponse(200, "OK", metrics::kTextContentType, render(), head_only);
}

}  // namespace bucketfs::tools
