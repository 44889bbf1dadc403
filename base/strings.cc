#include "base/strings.h"

namespace bucketfs::base {

std::string_view Trim(std::string_view s, std::string_view chars) {
  const size_t first = s.find_first_not_of(chars);
  if (first == std::string_view::npos) return {};
  const size_t last = s.find_last_not_of(chars);
  return s.substr(first, last - first + 1);
}

}  // namespace bucketfs::base
