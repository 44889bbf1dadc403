#include "mount-tools/control_protocol.h"

#include <cerrno>

namespace bucketfs::tools {

Result<ControlRequest> ParseControlLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  ControlRequest out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) {
      std::string word(line.substr(i, j - i));
      if (out.command.empty()) {
        out.command = std::move(word);
      } else {
        out.args.push_back(std::move(word));
      }
    }
    i = j;
  }
  if (out.command.empty()) return MakeError(EINVAL, "BadCommand", "empty command");
  return out;
}

std::string FormatControlReply(const Result<std::string>& reply) {
  if (!reply.ok()) {
    std::string message = reply.error().message;
    for (char& c : message) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return "error " + message + "\n\n";
  }
  std::string out = "ok\n";
  for (std::string_view body = *reply; !body.empty();) {
    const size_t eol = body.find('\n');
    const std::string_view line = body.substr(0, eol);
    if (!line.empty()) {  // an empty line would end the reply early
      out += line;
      out += '\n';
    }
    if (eol == std::string_view::npos) break;
    body.remove_prefix(eol + 1);
  }
  return out + "\n";
}

Result<std::string> ParseControlReply(std::string_view text, bool* complete) {
  const size_t end = text.find("\n\n");
  *complete = end != std::string_view::npos;
  if (!*complete) return MakeError(EPROTO, "ShortReply", "the daemon's reply ended early");
  if (text.starts_with("ok\n")) return std::string(text.substr(3, end + 1 > 3 ? end + 1 - 3 : 0));
  if (text.starts_with("error ")) {
    return MakeError(EIO, "ControlError", std::string(text.substr(6, end - 6)));
  }
  return MakeError(EPROTO, "BadReply", "not a control-socket reply");
}

std::map<std::string, std::string> ParseKeyValues(std::string_view body) {
  std::map<std::string, std::string> out;
  while (!body.empty()) {
    const size_t eol = body.find('\n');
    const std::string_view line = body.substr(0, eol);
    if (const size_t eq = line.find('='); eq != std::string_view::npos) {
      out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
    if (eol == std::string_view::npos) break;
    body.remove_prefix(eol + 1);
  }
  return out;
}

}  // namespace bucketfs::tools
