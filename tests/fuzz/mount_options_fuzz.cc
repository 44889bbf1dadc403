// Fuzz target: the mount command line (mount-tools/mount_options.h), from
// argv and from fstab's `-o a,b=c`. Input: arguments separated by NUL.
// Any argv must parse or give a usage error (EINVAL, code "Usage", a
// message), never a crash; the value parsers must stay within their ranges.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mount-tools/mount_options.h"

using namespace bucketfs::tools;  // NOLINT(google-build-using-namespace)

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

template <typename T>
void UsageOrValue(const bucketfs::Result<T>& r) {
  if (!r.ok()) Check(r.error().errno_value == EINVAL && !r.error().message.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = {"bucketfs"};
  size_t start = 0;
  while (start <= in.size() && args.size() < 64) {
    const size_t nul = in.find('\0', start);
    args.emplace_back(in.substr(start, nul == std::string_view::npos ? nul : nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  auto parsed = ParseMountCommand(args, MountDefaults{1000, 1000});
  UsageOrValue(parsed);
  if (parsed.ok() && !parsed->help) {
    Check(parsed->options.source.rfind("s3://", 0) == 0);
  }
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto ttl = ParseTtl(a);
    UsageOrValue(ttl);
    if (ttl.ok()) Check(std::isfinite(*ttl) && *ttl >= 0 && *ttl <= kIndefiniteTtlSeconds);
    UsageOrValue(ParseSize(a));
    auto mode = ParseMode(a);
    UsageOrValue(mode);
    if (mode.ok()) Check(*mode <= 07777);
    UsageOrValue(ParseLogLevel(a));
    UsageOrValue(ParseMountSource(a));
  }
  return 0;
}
