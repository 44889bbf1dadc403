#include "mount-tools/env_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "mount-tools/str_cat.h"

namespace bucketfs::tools {
namespace {

constexpr size_t kMaxEnvFileBytes = 1 << 20;  // a settings file, not a data file

Error EnvError(std::string message) { return MakeError(EINVAL, "EnvFile", std::move(message)); }

std::string_view Trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

bool IsValidKey(std::string_view key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The value after '=': quoted or bare. nullopt with `why` set when malformed.
std::optional<std::string> ParseValue(std::string_view raw, std::string& why) {
  raw = Trim(raw);
  if (raw.empty() || (raw[0] != '"' && raw[0] != '\'')) return std::string(raw);
  const char quote = raw[0];
  std::string out;
  size_t i = 1;
  for (; i < raw.size() && raw[i] != quote; ++i) {
    if (quote == '"' && raw[i] == '\\' && i + 1 < raw.size()) {
      const char next = raw[i + 1];
      if (next == 'n') {
        out += '\n';
        ++i;
        continue;
      }
      if (next == '"' || next == '\\' || next == '$' || next == '`') {
        out += next;
        ++i;
        continue;
      }
    }
    out += raw[i];
  }
  if (i == raw.size()) {
    why = StrCat({"unterminated ", quote == '"' ? "double" : "single", " quote"});
    return std::nullopt;
  }
  std::string_view rest = Trim(raw.substr(i + 1));
  if (!rest.empty() && rest[0] != '#') {
    why = "text after the closing quote";
    return std::nullopt;
  }
  return out;
}

}  // namespace

bool IsKnownEnvFileKey(std::string_view key) {
  static constexpr std::array<std::string_view, 13> kKnown = {"AWS_ACCESS_KEY_ID",
                                                              "AWS_SECRET_ACCESS_KEY",
                                                              "AWS_SESSION_TOKEN",
                                                              "AWS_ENDPOINT_URL",
                                                              "AWS_REGION",
                                                              "AWS_DEFAULT_REGION",
                                                              "AWS_CA_BUNDLE",
                                                              "AWS_PROFILE",
                                                              "AWS_SHARED_CREDENTIALS_FILE",
                                                              "AWS_CONFIG_FILE",
                                                              "BUCKETFS_SOURCE",
                                                              "BUCKETFS_MOUNTPOINT",
                                                              "BUCKETFS_OPTIONS"};
  return std::find(kKnown.begin(), kKnown.end(), key) != kKnown.end();
}

Result<EnvFile> ParseEnvFile(std::string_view text, std::string_view name) {
  EnvFile file;
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = StrCat({name, ":", std::to_string(line_no), ": "});
    if (line.substr(0, 7) == "export " || line.substr(0, 7) == "export\t") {
      line = Trim(line.substr(7));
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return EnvError(StrCat({where, "expected KEY=VALUE"}));
    }
    const std::string_view key = Trim(line.substr(0, eq));
    if (!IsValidKey(key)) {
      return EnvError(StrCat({where, "'", key, "' is not a variable name"}));
    }
    std::string why;
    std::optional<std::string> value = ParseValue(line.substr(eq + 1), why);
    if (!value) return EnvError(StrCat({where, why, " in the value of ", key}));
    if (!IsKnownEnvFileKey(key)) {
      file.warnings.push_back(StrCat({where, "unknown key '", key, "' (ignored)"}));
      continue;
    }
    file.settings.push_back({std::string(key), std::move(*value), line_no});
  }
  return file;
}

Result<EnvFile> LoadEnvFile(const std::string& path, uid_t owner) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return MakeError(err, "EnvFile", StrCat({"env file ", path, ": ", std::strerror(err)}));
  }
  struct stat st {};
  std::string text;
  Status checked = Status::Ok();
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    checked = EnvError(StrCat({"env file ", path, " is not a regular file"}));
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    checked = MakeError(EACCES, "EnvFile",
                        StrCat({"env file ", path, " is accessible by group or others (mode ", mode,
                                "); it may hold secrets: chmod 600 ", path}));
  } else if (st.st_uid != owner && st.st_uid != 0) {
    checked = MakeError(EACCES, "EnvFile",
                        StrCat({"env file ", path, " belongs to uid ", std::to_string(st.st_uid),
                                ", not to you (uid ", std::to_string(owner), ") or root"}));
  } else if (static_cast<uint64_t>(st.st_size) > kMaxEnvFileBytes) {
    checked = EnvError(StrCat({"env file ", path, " is larger than 1 MiB"}));
  } else {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        checked = MakeError(err, "EnvFile", StrCat({"env file ", path, ": ", std::strerror(err)}));
      }
      if (n <= 0 || text.size() > kMaxEnvFileBytes) break;
      text.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (!checked.ok()) return checked.error();
  return ParseEnvFile(text, path);
}

void MergeEnvFile(const EnvFile& file, s3::EnvMap& env) {
  const auto sets = [&](std::string_view key) {
    return std::any_of(file.settings.begin(), file.settings.end(),
                       [&](const EnvSetting& s) { return s.key == key; });
  };
  if (sets("AWS_ACCESS_KEY_ID") && !sets("AWS_SESSION_TOKEN")) env.erase("AWS_SESSION_TOKEN");
  for (const EnvSetting& s : file.settings) env[s.key] = s.value;
}

}  // namespace bucketfs::tools
