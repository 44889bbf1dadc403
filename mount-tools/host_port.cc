#include "mount-tools/host_port.h"

#include <cerrno>
#include <charconv>

namespace bucketfs::tools {

Result<HostPort> ParseHostPort(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return MakeError(EINVAL, "Usage",
                     "'" + std::string(text) + "' is not HOST:PORT (" + std::string(why) +
                         "), e.g. 127.0.0.1:9477");
  };
  HostPort out;
  std::string_view port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("an IPv6 address goes in brackets: [::1]:PORT");
    }
    out.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("no port");
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) {
      return bad("an IPv6 address goes in brackets: [::1]:PORT");
    }
    port = text.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return bad("the port must be a number in [1, 65535]");
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

}  // namespace bucketfs::tools
