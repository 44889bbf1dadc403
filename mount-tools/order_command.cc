#include "mount-tools/order_command.h"

#include <vector>

#include "base/strings.h"

namespace bucketfs::tools {

Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const int hi = i + 2 < text.size() ? base::HexDigitValue(text[i + 1]) : -1;
    const int lo = hi >= 0 ? base::HexDigitValue(text[i + 2]) : -1;
    if (lo < 0) {
      return MakeError(EINVAL, "BadEscape",
                       "order: bad %-escape in '" + std::string(text) + "' (%XX expected)");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<ControlAnswer> HandleOrderCommand(fs::Filesystem& filesystem,
                                         const ControlRequest& request) {
  const std::string verb = request.args.empty() ? "" : request.args[0];
  if (verb == "status") {
    const auto s = filesystem.read_order_stats();
    return ControlAnswer(
        "announced=" + std::to_string(s.announced) + "\nopened=" + std::to_string(s.opened) +
        "\ncursor=" + std::to_string(s.cursor) + "\nresolved=" + std::to_string(s.resolved) + "\n");
  }
  if (verb != "reset" && verb != "add") {
    return MakeError(EINVAL, "Usage", "usage: order reset | order add PATH... | order status");
  }
  std::vector<std::string> paths;
  for (size_t i = 1; i < request.args.size(); ++i) {
    if (request.args[i].empty()) continue;  // two spaces in a row
    auto p = PercentDecode(request.args[i]);
    if (!p.ok()) return p.error();
    paths.push_back(std::move(*p));
  }
  auto taken = filesystem.AnnounceOrder(verb == "reset", paths);
  if (!taken.ok()) return taken.error();
  if (*taken < paths.size()) {
    return MakeError(E2BIG, "OrderTooLong",
                     "order: only " + std::to_string(*taken) + " of " +
                         std::to_string(paths.size()) + " paths were taken (the order is full)");
  }
  return ControlAnswer("taken=" + std::to_string(*taken) + "\n");
}

}  // namespace bucketfs::tools
