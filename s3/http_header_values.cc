#include "s3/http_header_values.h"

#include <charconv>

#include "base/strings.h"

namespace bucketfs::s3 {
std::optional<uint64_t> ParseHeaderNumber(std::string_view value) {
  value = base::Trim(value);
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
    return std::nullopt;
  }
  return v;
}

std::optional<ContentRange> ParseContentRange(std::string_view value) {
  value = base::Trim(value);
  constexpr std::string_view kUnit = "bytes ";
  if (!value.starts_with(kUnit)) return std::nullopt;
  value.remove_prefix(kUnit.size());
  const size_t dash = value.find('-');
  const size_t slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) {
    return std::nullopt;
  }
  auto first = ParseHeaderNumber(value.substr(0, dash));
  auto last = ParseHeaderNumber(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange r{*first, *last, std::nullopt};
  const std::string_view total = base::Trim(value.substr(slash + 1));
  if (total != "*") {
    r.total = ParseHeaderNumber(total);
    if (!r.total || *r.total <= *last) return std::nullopt;
  }
  return r;
}

}  // namespace bucketfs::s3
