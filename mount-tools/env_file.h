// --env-file FILE: `.env`-style settings for the S3 client (credentials,
// endpoint, region, CA bundle, profile) kept out of the command line, where
// every user of the machine could read them in /proc/PID/cmdline.
//
// Format, one setting a line: `KEY=VALUE`; blank lines and lines starting
// with `#` are skipped; an optional `export ` before the key; the value may
// be in single quotes (taken literally) or double quotes (`\"`, `\\`, `\n`,
// `\$` and `` \` `` escapes), else it is trimmed. The file must not be readable or
// writable by group or others and must belong to the caller or root, as ssh
// demands of private keys. Values never appear in messages: they may be
// secrets.
//
// Precedence: the file wins over the process environment (it is the
// explicit choice on the command line), and flags win over both. When the
// file sets AWS_ACCESS_KEY_ID, an AWS_SESSION_TOKEN of the environment is
// dropped unless the file sets one too, so keys of two sources never pair.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "s3/credentials.h"
#include "s3/result.h"

namespace bucketfs::tools {

struct EnvSetting {
  std::string key;
  std::string value;
  int line = 0;
};

struct EnvFile {
  std::vector<EnvSetting> settings;   // known keys, in file order
  std::vector<std::string> warnings;  // "FILE:LINE: unknown key 'K' (ignored)"
};

// The keys --env-file accepts: the S3 client's, and BUCKETFS_SOURCE,
// BUCKETFS_MOUNTPOINT, BUCKETFS_OPTIONS, which the systemd unit reads from
// the same file.
bool IsKnownEnvFileKey(std::string_view key);

// Parses the text of an env file; `name` prefixes messages ("FILE:LINE: ...").
// A malformed line is an error naming its line; unknown keys are warnings.
Result<EnvFile> ParseEnvFile(std::string_view text, std::string_view name);

// Reads and parses `path` after checking that it exists, is a regular file,
// belongs to `owner` or root and is private (mode & 077 == 0).
Result<EnvFile> LoadEnvFile(const std::string& path, uid_t owner);

// Puts the file's settings into `env` (see the precedence above).
void MergeEnvFile(const EnvFile& file, s3::EnvMap& env);

}  // namespace bucketfs::tools
