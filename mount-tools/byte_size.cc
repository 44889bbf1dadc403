#include "mount-tools/byte_size.h"

#include <cerrno>
#include <charconv>
#include <string>

namespace bucketfs::tools {
namespace {

Error SizeError(std::string_view text, std::string_view what) {
  return MakeError(EINVAL, "InvalidArgument",
                   "'" + std::string(text) + "' " + std::string(what) + " (e.g. 16M, 1G, 4096)");
}

// Power-of-1024 exponent of a unit letter, or -1.
int UnitShift(char c) {
  switch (c) {
    case 'k':
    case 'K':
      return 10;
    case 'm':
    case 'M':
      return 20;
    case 'g':
    case 'G':
      return 30;
    case 't':
    case 'T':
      return 40;
    default:
      return -1;
  }
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  if (end == first) return SizeError(text, "is not a size");
  if (ec == std::errc::result_out_of_range) return SizeError(text, "is too large");
  std::string_view suffix(end, static_cast<size_t>(last - end));
  int shift = 0;
  if (!suffix.empty() && suffix != "B") {
    shift = UnitShift(suffix[0]);
    const std::string_view tail = suffix.substr(1);
    if (shift < 0 || !(tail.empty() || tail == "B" || tail == "iB")) {
      return SizeError(text, "has an unknown size suffix");
    }
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) return SizeError(text, "is too large");
  return value << shift;
}

}  // namespace bucketfs::tools
