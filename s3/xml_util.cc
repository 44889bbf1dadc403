#include "s3/xml_util.h"

#include <cctype>
#include <charconv>
#include <sstream>

#include "base/strings.h"
#include "s3/time_util.h"

namespace bucketfs::s3::xml {
namespace {

// A short, printable excerpt of a bad value for error messages.
std::string Excerpt(std::string_view s) {
  constexpr size_t kMax = 64;
  std::string out;
  for (char ch : s.substr(0, kMax)) {
    out += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
  }
  if (s.size() > kMax) out += "...";
  return out;
}

Error BadValue(std::string_view operation, std::string_view name, std::string_view kind,
               std::string_view value) {
  return MalformedResponse(operation, "element <" + std::string(name) + "> is not " +
                                          std::string(kind) + ": \"" + Excerpt(value) + "\"");
}

Error Missing(std::string_view operation, std::string_view name) {
  return MalformedResponse(operation, "missing element <" + std::string(name) + ">");
}

template <typename T>
Result<T> GetNumber(pugi::xml_node parent, std::string_view name, std::string_view operation,
                    std::optional<T> fallback, std::string_view kind) {
  pugi::xml_node node = Child(parent, name);
  if (!node) {
    if (fallback) return *fallback;
    return Missing(operation, name);
  }
  const std::string text = NodeText(node);
  const std::string_view v = base::Trim(text);
  T out{};
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
    return BadValue(operation, name, kind, text);
  }
  return out;
}

}  // namespace

Error MalformedResponse(std::string_view operation, std::string_view what) {
  Error e = MakeError(EIO, "MalformedResponse", std::string(operation) + ": " + std::string(what));
  return e;
}

Status ParseXmlDocument(std::string_view body, std::string_view operation,
                        pugi::xml_document& doc) {
  if (base::Trim(body).empty())
    return MalformedResponse(operation, "empty response body, XML expected");
  // parse_default decodes entities and keeps CDATA; parse_ws_pcdata_single
  // keeps a key made only of spaces ("<Key> </Key>").
  const unsigned options = pugi::parse_default | pugi::parse_ws_pcdata_single;
  const pugi::xml_parse_result r =
      doc.load_buffer(body.data(), body.size(), options, pugi::encoding_utf8);
  if (!r) {
    return MalformedResponse(operation, std::string("malformed XML (") + r.description() +
                                            " at byte " + std::to_string(r.offset) + " of " +
                                            std::to_string(body.size()) + ")");
  }
  if (!doc.document_element()) return MalformedResponse(operation, "XML body has no root element");
  return Status::Ok();
}

Result<pugi::xml_node> RootElement(const pugi::xml_document& doc, std::string_view root_name,
                                   std::string_view operation) {
  pugi::xml_node root = doc.document_element();
  if (!root) return MalformedResponse(operation, "XML body has no root element");
  if (LocalName(root.name()) != root_name) {
    return MalformedResponse(
        operation, "expected <" + std::string(root_name) + ">, got <" + Excerpt(root.name()) + ">");
  }
  return root;
}

std::string_view LocalName(const char* qualified_name) {
  std::string_view n(qualified_name ? qualified_name : "");
  const size_t colon = n.find(':');
  return colon == std::string_view::npos ? n : n.substr(colon + 1);
}

pugi::xml_node Child(pugi::xml_node parent, std::string_view name) {
  for (pugi::xml_node c = parent.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && LocalName(c.name()) == name) return c;
  }
  return {};
}

std::string NodeText(pugi::xml_node node) {
  std::string out;
  for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) out += c.value();
  }
  return out;
}

std::optional<std::string> GetText(pugi::xml_node parent, std::string_view name) {
  pugi::xml_node node = Child(parent, name);
  if (!node) return std::nullopt;
  return NodeText(node);
}

std::string GetTextOr(pugi::xml_node parent, std::string_view name, std::string_view fallback) {
  auto v = GetText(parent, name);
  return v ? std::move(*v) : std::string(fallback);
}

Result<std::string> GetRequiredText(pugi::xml_node parent, std::string_view name,
                                    std::string_view operation) {
  auto v = GetText(parent, name);
  if (!v) return Missing(operation, name);
  return std::move(*v);
}

Result<uint64_t> GetUint64(pugi::xml_node parent, std::string_view name, std::string_view operation,
                           std::optional<uint64_t> fallback) {
  return GetNumber<uint64_t>(parent, name, operation, fallback, "an unsigned integer");
}

Result<int64_t> GetInt(pugi::xml_node parent, std::string_view name, std::string_view operation,
                       std::optional<int64_t> fallback) {
  return GetNumber<int64_t>(parent, name, operation, fallback, "an integer");
}

Result<bool> GetBool(pugi::xml_node parent, std::string_view name, std::string_view operation,
                     std::optional<bool> fallback) {
  pugi::xml_node node = Child(parent, name);
  if (!node) {
    if (fallback) return *fallback;
    return Missing(operation, name);
  }
  const std::string text = NodeText(node);
  std::string v(base::Trim(text));
  for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return BadValue(operation, name, "a boolean", text);
}

Result<Timestamp> GetTimestamp(pugi::xml_node parent, std::string_view name,
                               std::string_view operation, std::optional<Timestamp> fallback) {
  pugi::xml_node node = Child(parent, name);
  if (!node) {
    if (fallback) return *fallback;
    return Missing(operation, name);
  }
  const std::string text = NodeText(node);
  auto t = ParseIso8601(text);
  if (!t) return BadValue(operation, name, "an ISO 8601 timestamp", text);
  return *t;
}

std::string Serialize(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw, pugi::encoding_utf8);
  // pugixml writes CR and LF raw, and every XML parser (S3's too) normalizes
  // CR LF and lone CR to LF: a key holding them would change. With
  // format_raw no markup holds a line break, so each one found is text and
  // becomes a character reference.
  const std::string raw = out.str();
  std::string escaped;
  escaped.reserve(raw.size());
  for (char c : raw) {
    if (c == '\r') {
      escaped += "&#13;";
    } else if (c == '\n') {
      escaped += "&#10;";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

}  // namespace bucketfs::s3::xml
