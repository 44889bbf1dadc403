// Typed helpers over pugixml for S3's XML answers and request bodies.
//
// Every S3 XML answer goes through ParseXmlDocument (which turns a malformed,
// truncated or non-XML body into an explicit "MalformedResponse" error naming
// the operation) and is then read with the typed getters below. Elements are
// matched by local name, so a default namespace (xmlns on the root, as S3
// sends) or a prefixed one ("s3:Key") reads the same; unknown elements are
// ignored. Nothing here searches raw text for tags.
//
// Getters take an optional fallback: a missing element yields the fallback
// when one is given and an error otherwise; a present but malformed value is
// always an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::s3::xml {

using Timestamp = std::chrono::system_clock::time_point;

// "MalformedResponse", EIO, "<operation>: <what>".
Error MalformedResponse(std::string_view operation, std::string_view what);

// Parses `body` into `doc`. Errors: not well-formed, truncated, or no root
// element (e.g. an empty body).
Status ParseXmlDocument(std::string_view body, std::string_view operation, pugi::xml_document& doc);

// The root element, checked to be named `root_name` (local name). An HTML
// page or an unexpected answer gives a MalformedResponse naming what came.
Result<pugi::xml_node> RootElement(const pugi::xml_document& doc, std::string_view root_name,
                                   std::string_view operation);

// "ns:Name" -> "Name".
std::string_view LocalName(const char* qualified_name);

// First child element with the given local name; an empty node when absent.
pugi::xml_node Child(pugi::xml_node parent, std::string_view name);

// Calls fn(pugi::xml_node) for each child element with the given local name.
template <typename Fn>
void ForEachChild(pugi::xml_node parent, std::string_view name, Fn&& fn) {
  for (pugi::xml_node c = parent.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && LocalName(c.name()) == name) fn(c);
  }
}

// The text content of an element (all its character data, entities decoded).
std::string NodeText(pugi::xml_node node);

// Text of the child `name`; nullopt when the child is absent.
std::optional<std::string> GetText(pugi::xml_node parent, std::string_view name);
// Text of the child `name`, or `fallback` when absent.
std::string GetTextOr(pugi::xml_node parent, std::string_view name, std::string_view fallback = "");
// Text of a required child; missing -> MalformedResponse.
Result<std::string> GetRequiredText(pugi::xml_node parent, std::string_view name,
                                    std::string_view operation);

Result<uint64_t> GetUint64(pugi::xml_node parent, std::string_view name, std::string_view operation,
                           std::optional<uint64_t> fallback = std::nullopt);
Result<int64_t> GetInt(pugi::xml_node parent, std::string_view name, std::string_view operation,
                       std::optional<int64_t> fallback = std::nullopt);
// "true"/"false" (any case), "1"/"0".
Result<bool> GetBool(pugi::xml_node parent, std::string_view name, std::string_view operation,
                     std::optional<bool> fallback = std::nullopt);
// ISO 8601 UTC, see ParseIso8601.
Result<Timestamp> GetTimestamp(pugi::xml_node parent, std::string_view name,
                               std::string_view operation,
                               std::optional<Timestamp> fallback = std::nullopt);

// Serializes a document built with pugixml (escaping done by pugixml) with an
// XML declaration and no indentation. CR and LF in text become &#13; and
// &#10; so they survive the parser's end-of-line normalization (S3 asks for
// exactly that in keys).
std::string Serialize(const pugi::xml_document& doc);

}  // namespace bucketfs::s3::xml
