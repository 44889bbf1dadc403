// The line protocol of the control socket (control_socket.h): pure parsing
// and formatting, unit-tested apart from sockets.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "s3/result.h"

namespace bucketfs::tools {

struct ControlRequest {
  std::string command;
  std::vector<std::string> args;
};

// "status\n", "status --verbose" -> {command, args} split on spaces.
// An empty line is an error.
Result<ControlRequest> ParseControlLine(std::string_view line);

// `ok\n` + body (a final newline added when missing) + `\n`, or
// `error MESSAGE\n\n` (newlines in the message become spaces).
std::string FormatControlReply(const Result<std::string>& reply);

// The reply in `text` (up to and including its empty line): the body, or the
// error it carries. `complete` tells whether `text` holds the whole reply.
Result<std::string> ParseControlReply(std::string_view text, bool* complete);

// key=value lines -> map (lines without '=' are skipped).
std::map<std::string, std::string> ParseKeyValues(std::string_view body);

}  // namespace bucketfs::tools
