#include "tests/s3sim/http_message.h"

#include "tests/s3sim/util.h"

namespace s3sim {

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::optional<HttpRequest> ParseRequestHead(std::string_view head) {
  HttpRequest req;
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return std::nullopt;
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return std::nullopt;
  req.method = std::string(line.substr(0, sp1));
  req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    req.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    req.minor_version = 0;
  } else {
    return std::nullopt;
  }
  if (req.method.empty() || req.target.empty()) return std::nullopt;
  size_t q = req.target.find('?');
  req.raw_path = req.target.substr(0, q);
  if (q != std::string::npos) req.raw_query = req.target.substr(q + 1);

  size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view h = head.substr(pos, end - pos);
    pos = end + 2;
    if (h.empty()) continue;
    size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string name = ToLower(h.substr(0, colon));
    if (name.find_first_of(" \t") != std::string::npos) return std::nullopt;
    req.headers.emplace_back(std::move(name), std::string(Trim(h.substr(colon + 1), kSpaceOrTab)));
  }
  return req;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    std::string_view raw_query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= raw_query.size() && !raw_query.empty()) {
    size_t amp = raw_query.find('&', pos);
    if (amp == std::string_view::npos) amp = raw_query.size();
    std::string_view item = raw_query.substr(pos, amp - pos);
    pos = amp + 1;
    if (!item.empty()) {
      size_t eq = item.find('=');
      auto name = UriDecode(item.substr(0, eq));
      auto value = eq == std::string_view::npos ? std::optional<std::string>("")
                                                : UriDecode(item.substr(eq + 1));
      if (!name || !value) return std::nullopt;
      out.emplace_back(std::move(*name), std::move(*value));
    }
    if (amp == raw_query.size()) break;
  }
  return out;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Payload Too Large";
    case 416:
      return "Requested Range Not Satisfiable";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

}  // namespace s3sim
