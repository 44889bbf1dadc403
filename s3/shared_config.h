// The AWS shared files (~/.aws/credentials and ~/.aws/config): where they
// are, which profile applies, and a tolerant INI reader for them.
//
// Format as the AWS CLI writes it: "[section]" headers ("[name]" in the
// credentials file, "[profile name]" or "[default]" in the config file),
// "key = value" lines, comments starting with '#' or ';' (also after a value
// when preceded by whitespace), blank lines, and indented continuation lines
// under a key with an empty value, which form a sub-section:
//   s3 =
//     addressing_style = path        -> key "s3.addressing_style"
// Keys are lowercased; unknown keys and malformed lines are kept or skipped,
// never an error: a file the AWS CLI accepts must not stop a mount.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "s3/credentials.h"
#include "s3/result.h"

namespace bucketfs::s3 {

using IniSection = std::map<std::string, std::string>;

struct IniFile {
  std::map<std::string, IniSection> sections;
  // nullptr when absent.
  const IniSection* Find(const std::string& section) const;
};

IniFile ParseIni(std::string_view text);

// Reads and parses `path`. A missing file gives an empty IniFile and
// *missing = true; other read failures are errors (EACCES/EIO) naming the path.
Result<IniFile> ReadIniFile(const std::string& path, bool* missing = nullptr);

// AWS_SHARED_CREDENTIALS_FILE, else $HOME/.aws/credentials ("" without HOME).
std::string SharedCredentialsFilePath(const EnvMap& env);
// AWS_CONFIG_FILE, else $HOME/.aws/config ("" without HOME).
std::string SharedConfigFilePath(const EnvMap& env);

// The profile in effect: explicit (--profile), else AWS_PROFILE, else
// "default". *explicitly_named tells whether a user named it (then a missing
// profile is an error rather than "no credentials here").
std::string EffectiveProfile(const std::string& explicit_profile, const EnvMap& env,
                             bool* explicitly_named = nullptr);

// The section of `profile` in the config file: "[profile NAME]"; for
// "default" also "[default]" (the form the CLI writes).
const IniSection* ConfigFileProfile(const IniFile& config, const std::string& profile);

// Value of a key in a section, nullopt when absent or empty.
std::optional<std::string> IniValue(const IniSection* section, const std::string& key);

// Looks up `name` in env; nullopt when unset or empty.
std::optional<std::string> EnvValue(const EnvMap& env, const std::string& name);

}  // namespace bucketfs::s3
