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

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto v = static_cast<double>(bytes);
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
