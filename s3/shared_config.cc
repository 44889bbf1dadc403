#include "s3/shared_config.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/strings.h"

namespace bucketfs::s3 {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "profile   foo" -> "profile foo": one space between words.
std::string NormalizeSectionName(std::string_view name) {
  std::string out;
  bool space = false;
  for (char c : base::Trim(name)) {
    if (IsBlank(c)) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// Drops a trailing " # comment" / " ; comment". A '#' not preceded by
// whitespace is data (values such as URLs may contain it).
std::string_view StripInlineComment(std::string_view value) {
  for (size_t i = 1; i < value.size(); ++i) {
    if ((value[i] == '#' || value[i] == ';') && IsBlank(value[i - 1])) {
      return base::Trim(value.substr(0, i));
    }
  }
  return value;
}

}  // namespace

const IniSection* IniFile::Find(const std::string& section) const {
  const auto it = sections.find(section);
  return it == sections.end() ? nullptr : &it->second;
}

IniFile ParseIni(std::string_view text) {
  IniFile ini;
  IniSection* current = nullptr;
  std::string parent_key;  // key with an empty value: indented lines nest under it
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    const bool indented = !raw.empty() && IsBlank(raw.front());
    const std::string_view line = base::Trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      const size_t close = line.find(']');
      if (close == std::string_view::npos) {
        current = nullptr;  // malformed header: ignore its keys rather than misfile them
        continue;
      }
      current = &ini.sections[NormalizeSectionName(line.substr(1, close - 1))];
      parent_key.clear();
      continue;
    }
    if (current == nullptr) continue;  // keys before any section
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key = Lower(base::Trim(line.substr(0, eq)));
    if (key.empty()) continue;
    const std::string_view value = StripInlineComment(base::Trim(line.substr(eq + 1)));
    if (indented && !parent_key.empty()) {
      (*current)[parent_key + "." + key] = std::string(value);
      continue;
    }
    (*current)[key] = std::string(value);
    parent_key = value.empty() ? key : std::string();
  }
  return ini;
}

Result<IniFile> ReadIniFile(const std::string& path, bool* missing) {
  if (missing != nullptr) *missing = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      if (missing != nullptr) *missing = true;
      return IniFile{};
    }
    return MakeError(err == EACCES ? EACCES : EIO, "ConfigFileUnreadable",
                     "cannot read " + path + ": " + std::strerror(err));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseIni(buf.str());
}

std::optional<std::string> EnvValue(const EnvMap& env, const std::string& name) {
  const auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::string SharedCredentialsFilePath(const EnvMap& env) {
  if (auto p = EnvValue(env, "AWS_SHARED_CREDENTIALS_FILE")) return *p;
  if (auto home = EnvValue(env, "HOME")) return *home + "/.aws/credentials";
  return "";
}

std::string SharedConfigFilePath(const EnvMap& env) {
  if (auto p = EnvValue(env, "AWS_CONFIG_FILE")) return *p;
  if (auto home = EnvValue(env, "HOME")) return *home + "/.aws/config";
  return "";
}

std::string EffectiveProfile(const std::string& explicit_profile, const EnvMap& env,
                             bool* explicitly_named) {
  if (explicitly_named != nullptr) *explicitly_named = true;
  if (!explicit_profile.empty()) return explicit_profile;
  if (auto p = EnvValue(env, "AWS_PROFILE")) return *p;
  if (explicitly_named != nullptr) *explicitly_named = false;
  return "default";
}

const IniSection* ConfigFileProfile(const IniFile& config, const std::string& profile) {
  if (const IniSection* s = config.Find("profile " + profile)) return s;
  if (profile == "default") return config.Find("default");
  return nullptr;
}

std::optional<std::string> IniValue(const IniSection* section, const std::string& key) {
  if (section == nullptr) return std::nullopt;
  const auto it = section->find(key);
  if (it == section->end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace bucketfs::s3
