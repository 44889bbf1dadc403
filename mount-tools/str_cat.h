// StrCat: joins pieces into one string with a single allocation. Used for
// messages instead of chains of operator+ (which is also what g++ 12's
// -Wrestrict false positive on `"lit" + std::string(...)` chains trips over).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace bucketfs::tools {

inline std::string StrCat(std::initializer_list<std::string_view> pieces) {
  size_t size = 0;
  for (std::string_view p : pieces) size += p.size();
  std::string out;
  out.reserve(size);
  for (std::string_view p : pieces) out.append(p);
  return out;
}

}  // namespace bucketfs::tools
