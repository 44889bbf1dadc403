#include "mount-tools/s3_url.h"

#include <cerrno>
#include <cstdio>

namespace bucketfs::tools {

std::string S3Url::ToString() const {
  std::string out = "s3://" + bucket;
  if (!key.empty()) out += "/" + key;
  return out;
}

Result<S3Url> ParseS3Url(std::string_view text) {
  constexpr std::string_view kScheme = "s3://";
  if (text.substr(0, kScheme.size()) != kScheme) {
    return MakeError(EINVAL, "InvalidArgument",
                     "expected s3://BUCKET[/KEY], got '" + std::string(text) + "'");
  }
  std::string_view rest = text.substr(kScheme.size());
  size_t slash = rest.find('/');
  S3Url url;
  url.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) url.key = std::string(rest.substr(slash + 1));
  if (url.bucket.empty()) {
    return MakeError(EINVAL, "InvalidArgument",
                     "missing bucket name in '" + std::string(text) + "'");
  }
  return url;
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t value = 0;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) {
      return MakeError(EINVAL, "InvalidArgument", "size too large: '" + std::string(text) + "'");
    }
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) {
    return MakeError(EINVAL, "InvalidArgument", "not a size: '" + std::string(text) + "'");
  }
  std::string_view suffix = text.substr(i);
  int shift = 0;
  if (!suffix.empty()) {
    switch (suffix[0]) {
      case 'k':
      case 'K':
        shift = 10;
        break;
      case 'm':
      case 'M':
        shift = 20;
        break;
      case 'g':
      case 'G':
        shift = 30;
        break;
      case 't':
      case 'T':
        shift = 40;
        break;
      case 'b':
      case 'B':
        shift = 0;
        break;
      default:
        return MakeError(EINVAL, "InvalidArgument",
                         "bad size suffix in '" + std::string(text) + "'");
    }
    std::string_view tail = suffix.substr(1);
    if (shift != 0 && !(tail.empty() || tail == "B" || tail == "iB" || tail == "b")) {
      return MakeError(EINVAL, "InvalidArgument", "bad size suffix in '" + std::string(text) + "'");
    }
    if (shift == 0 && !tail.empty()) {
      return MakeError(EINVAL, "InvalidArgument", "bad size suffix in '" + std::string(text) + "'");
    }
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) {
    return MakeError(EINVAL, "InvalidArgument", "size too large: '" + std::string(text) + "'");
  }
  return value << shift;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

}  // namespace bucketfs::tools
