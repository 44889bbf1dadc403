#include "tests/s3sim/range.h"

#include "tests/s3sim/util.h"

namespace s3sim {

RangeResult ParseRange(std::string_view header, uint64_t size) {
  RangeResult whole;
  std::string_view h = Trim(header, kSpaceOrTab);
  if (h.substr(0, 6) != "bytes=") return whole;
  h = Trim(h.substr(6), kSpaceOrTab);
  if (h.find(',') != std::string_view::npos) return whole;
  size_t dash = h.find('-');
  if (dash == std::string_view::npos) return whole;
  std::string_view a = Trim(h.substr(0, dash), kSpaceOrTab),
                   b = Trim(h.substr(dash + 1), kSpaceOrTab);
  RangeResult out;
  out.kind = RangeResult::Kind::kPartial;
  if (a.empty()) {  // suffix: last n bytes
    auto n = ParseU64(b);
    if (!n) return whole;
    if (*n == 0 || size == 0) return {RangeResult::Kind::kUnsatisfiable, 0, 0};
    out.first = *n >= size ? 0 : size - *n;
    out.last = size - 1;
    return out;
  }
  auto first = ParseU64(a);
  if (!first) return whole;
  uint64_t last = size == 0 ? 0 : size - 1;
  if (!b.empty()) {
    auto l = ParseU64(b);
    if (!l || *l < *first) return whole;
    if (*l < last) last = *l;
  }
  if (*first >= size) return {RangeResult::Kind::kUnsatisfiable, 0, 0};
  out.first = *first;
  out.last = last;
  return out;
}

}  // namespace s3sim
