// HOST:PORT addresses of --metrics-addr: parsed once (pure, for usage
// errors before anything starts) and resolved when the socket is bound.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::tools {

struct HostPort {
  std::string host;  // "127.0.0.1", "localhost", "::1" (without brackets)
  uint16_t port = 0;
};

// "127.0.0.1:9477", "localhost:9477", "[::1]:9477", "0.0.0.0:9477". The host
// is required (no silent "every interface"); the port is 1..65535.
Result<HostPort> ParseHostPort(std::string_view text);

}  // namespace bucketfs::tools
