// MountOptions: the whole configuration of one `bucketfs SOURCE MOUNTPOINT`
// invocation, parsed once from argv into an immutable struct that the mount
// command hands, piece by piece, to the S3 client, the filesystem core and
// the libfuse session.
//
// Every bucketfs option has two spellings: a flag (`--allow-delete`,
// `--metadata-ttl 60`, `--metadata-ttl=60`) and an fstab `-o` entry
// (`allow_delete`, `metadata_ttl=60`: dashes become underscores). `-o` also
// takes the generic mount(8) options (accepted and ignored, or passed to the
// kernel) and a few libfuse options (passed through). Anything else is a
// usage error, reported before anything is mounted.
//
// Parsing is pure: no file system access, no environment reads (the caller
// passes the defaults it needs), so it is unit-tested exhaustively.
#pragma once

#include <spdlog/common.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuse-adapter/fuse_session.h"
#include "fuse/fs_config.h"
#include "mount-tools/host_port.h"
#include "s3/client_config.h"
#include "s3/result.h"

namespace bucketfs::tools {

// The kernel's and libfuse's timeouts are finite; "indefinite" means this.
inline constexpr double kIndefiniteTtlSeconds = 1e9;  // ~31 years

struct LogSettings {
  spdlog::level::level_enum level = spdlog::level::info;
  std::string file;  // "" = stderr in the foreground, discarded when detached
};

struct MountOptions {
  std::string source;  // as given: "s3://bucket/prefix"
  s3::ClientConfigOverrides client;
  fs::FsConfig fs;
  fs::FuseMountOptions fuse;
  LogSettings log;
  bool allow_nonempty = false;  // -o nonempty: mount over a non-empty directory
  std::string env_file;         // --env-file: AWS_* settings (env_file.h); "" = none
  // --metrics-addr: where GET /metrics is served; unset: nowhere.
  std::optional<HostPort> metrics_addr;
};

// What the process was asked to do.
struct ParsedMountCommand {
  bool help = false;  // --help/-h: print MountUsage() and exit 0
  MountOptions options;
};

// Values the parser would otherwise read from the process.
struct MountDefaults {
  uid_t uid = 0;
  gid_t gid = 0;
};

// Parses `bucketfs SOURCE MOUNTPOINT [options]`; args[0] is the program name.
// Errors are usage errors (errno EINVAL, code "Usage") whose message names
// the offending argument; the caller prints it and exits 2.
Result<ParsedMountCommand> ParseMountCommand(const std::vector<std::string>& args,
                                             const MountDefaults& defaults);

// The --help text.
std::string MountUsage();

// Helpers, exposed for tests.
// "s3://", "s3://bucket", "s3://bucket/prefix[/]" -> bucket, prefix ("" or
// ending in "/").
struct MountSource {
  std::string bucket;
  std::string prefix;
};
Result<MountSource> ParseMountSource(std::string_view text);
// "60", "0.5", "indefinite".
Result<double> ParseTtl(std::string_view text);
// "8388608", "8M", "8MiB", "1G": powers of 1024.
Result<uint64_t> ParseSize(std::string_view text);
// Octal permission bits: "644", "0644", "0755".
Result<mode_t> ParseMode(std::string_view text);
// trace, debug, info, warn (warning), error, critical, off.
Result<spdlog::level::level_enum> ParseLogLevel(std::string_view text);

}  // namespace bucketfs::tools
