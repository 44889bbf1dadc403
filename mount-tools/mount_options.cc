// Table-driven parser for `bucketfs SOURCE MOUNTPOINT [options]`; see
// mount_options.h. One table row per bucketfs option, looked up by its flag
// name (dashes) or its fstab name (underscores); generic mount(8) and libfuse
// options come after, in their own short lists.
#include "mount-tools/mount_options.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>

#include "mount-tools/byte_size.h"
#include "mount-tools/str_cat.h"
#include "s3/s3_limits.h"

namespace bucketfs::tools {
namespace {

Error UsageError(std::string message) { return MakeError(EINVAL, "Usage", std::move(message)); }

std::string Underscored(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "16 MiB", "96 KiB", "1000 bytes": exact, for messages.
std::string ShowSize(uint64_t bytes) {
  if (bytes != 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

template <typename Int>
Result<Int> ParseInt(std::string_view text, std::string_view what, Int min, Int max) {
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return UsageError(StrCat({what, ": '", text, "' is not a number in [", std::to_string(min),
                              ", ", std::to_string(max), "]"}));
  }
  return v;
}

// Mutable state while parsing; frozen into MountOptions at the end.
struct Builder {
  MountOptions opts;
  std::vector<std::string> positionals;
  std::optional<std::string> prefix_flag;
  bool log_level_set = false;
  bool debug = false;
};

using Setter = std::function<Status(Builder&, std::string_view value)>;

struct OptionSpec {
  std::string_view name;  // flag spelling without "--"; fstab spelling = dashes -> underscores
  bool takes_value;
  Setter set;
  std::string_view help;
};

Setter Flag(bool fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view) {
    b.opts.fs.*field = true;
    return Status::Ok();
  };
}

Setter ClientString(std::optional<std::string> s3::ClientConfigOverrides::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    if (v.empty()) return UsageError("empty value");
    b.opts.client.*field = std::string(v);
    return Status::Ok();
  };
}

Setter ClientFlag(std::optional<bool> s3::ClientConfigOverrides::*field, bool value) {
  return [field, value](Builder& b, std::string_view) {
    b.opts.client.*field = value;
    return Status::Ok();
  };
}

Setter Ttl(double fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    auto ttl = ParseTtl(v);
    if (!ttl) return ttl.error();
    b.opts.fs.*field = *ttl;
    return Status::Ok();
  };
}

Setter Mode(mode_t fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    auto mode = ParseMode(v);
    if (!mode) return mode.error();
    b.opts.fs.*field = *mode;
    return Status::Ok();
  };
}

Setter PartSize(uint64_t fs::FsConfig::*field, uint64_t min, uint64_t max) {
  return [=](Builder& b, std::string_view v) -> Status {
    auto size = ParseSize(v);
    if (!size) return size.error();
    if (*size < min || *size > max) {
      return UsageError(StrCat({"'", v, "' is outside [", std::to_string(min >> 20), " MiB, ",
                                std::to_string(max >> 20), " MiB]"}));
    }
    b.opts.fs.*field = *size;
    return Status::Ok();
  };
}

// A count within [min, max]; `name` is the option's, for the error.
Setter Count(int fs::FsConfig::*field, const char* name, int min, int max) {
  return [=](Builder& b, std::string_view v) -> Status {
    auto n = ParseInt<int>(v, name, min, max);
    if (!n) return n.error();
    b.opts.fs.*field = *n;
    return Status::Ok();
  };
}

// A memory budget: any size above 0 (checked against its part size in Finish).
Setter Budget(uint64_t fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    auto size = ParseSize(v);
    if (!size) return size.error();
    if (*size == 0) return UsageError("must be more than 0");
    b.opts.fs.*field = *size;
    return Status::Ok();
  };
}

const std::vector<OptionSpec>& Specs() {
  static const std::vector<OptionSpec> specs = {
      // What is mounted, and how to reach it.
      {"prefix", true,
       [](Builder& b, std::string_view v) -> Status {
         b.prefix_flag = std::string(v);
         return Status::Ok();
       },
       "mount only keys under PREFIX (same as s3://BUCKET/PREFIX)"},
      {"region", true, ClientString(&s3::ClientConfigOverrides::region), "S3 region"},
      {"endpoint-url", true, ClientString(&s3::ClientConfigOverrides::endpoint_url),
       "S3 endpoint, e.g. http://127.0.0.1:9000"},
      {"force-path-style", false, ClientFlag(&s3::ClientConfigOverrides::force_path_style, true),
       "address buckets as ENDPOINT/BUCKET instead of BUCKET.ENDPOINT"},
      {"profile", true, ClientString(&s3::ClientConfigOverrides::profile),
       "profile of ~/.aws/config and ~/.aws/credentials"},
      {"no-sign-request", false, ClientFlag(&s3::ClientConfigOverrides::no_sign_request, true),
       "anonymous access (public buckets)"},
      {"ca-bundle", true, ClientString(&s3::ClientConfigOverrides::ca_bundle),
       "PEM file of CA certificates to trust"},
      {"no-verify-ssl", false, ClientFlag(&s3::ClientConfigOverrides::verify_tls, false),
       "do not verify TLS certificates (insecure)"},
      // Permissions and mutations.
      {"read-only", false, Flag(&fs::FsConfig::read_only), "refuse every change (EROFS)"},
      {"allow-delete", false, Flag(&fs::FsConfig::allow_delete), "allow unlink and rmdir"},
      {"allow-overwrite", false, Flag(&fs::FsConfig::allow_overwrite),
       "allow replacing existing objects (O_TRUNC, rename onto a file)"},
      {"allow-dir-rename", false, Flag(&fs::FsConfig::allow_dir_rename),
       "allow renaming directories (copies every key)"},
      {"dir-markers", false, Flag(&fs::FsConfig::dir_markers),
       "mkdir writes a zero-byte DIR/ marker object"},
      {"uid", true,
       [](Builder& b, std::string_view v) -> Status {
         auto id = ParseInt<uint32_t>(v, "uid", 0, 0xfffffffeu);
         if (!id) return id.error();
         b.opts.fs.uid = *id;
         return Status::Ok();
       },
       "owner reported for every file (default: you)"},
      {"gid", true,
       [](Builder& b, std::string_view v) -> Status {
         auto id = ParseInt<uint32_t>(v, "gid", 0, 0xfffffffeu);
         if (!id) return id.error();
         b.opts.fs.gid = *id;
         return Status::Ok();
       },
       "group reported for every file (default: yours)"},
      {"file-mode", true, Mode(&fs::FsConfig::file_mode), "permission bits of files (0644)"},
      {"dir-mode", true, Mode(&fs::FsConfig::dir_mode), "permission bits of directories (0755)"},
      {"allow-other", false,
       [](Builder& b, std::string_view) {
         b.opts.fuse.allow_other = true;
         return Status::Ok();
       },
       "let other users access the mount"},
      {"allow-root", false,
       [](Builder& b, std::string_view) {
         b.opts.fuse.allow_root = true;
         return Status::Ok();
       },
       "let root access the mount"},
      // Caching and performance.
      {"metadata-ttl", true, Ttl(&fs::FsConfig::metadata_ttl),
       "SECONDS|indefinite the kernel caches names and attributes (1)"},
      {"negative-ttl", true, Ttl(&fs::FsConfig::negative_ttl),
       "SECONDS|indefinite the kernel caches 'no such file' (0)"},
      {"readdirplus", true,
       [](Builder& b, std::string_view v) -> Status {
         using P = fs::FsConfig::ReaddirPlus;
         if (v == "auto")
           b.opts.fs.readdirplus = P::kAuto;
         else if (v == "on")
           b.opts.fs.readdirplus = P::kOn;
         else if (v == "off")
           b.opts.fs.readdirplus = P::kOff;
         else
           return UsageError(StrCat({"'", v, "' is not auto, on or off"}));
         return Status::Ok();
       },
       "auto|on|off: which directory entries carry attributes; auto: files only for processes that "
       "stat files (auto)"},
      {"cache", true,
       [](Builder& b, std::string_view v) -> Status {
         if (v.empty()) return UsageError("empty directory");
         b.opts.fs.cache_dir = std::string(v);
         return Status::Ok();
       },
       "DIR for the local data cache"},
      {"part-size", true,
       PartSize(&fs::FsConfig::write_part_size, s3::kMinPartSize, s3::kMaxPartSize),
       "SIZE of multipart upload parts (16M)"},
      {"read-part-size", true, PartSize(&fs::FsConfig::read_part_size, 64ull << 10, 1ull << 30),
       "SIZE of ranged reads (8M)"},
      {"async-close", false, Flag(&fs::FsConfig::async_close),
       "close() returns once a written file is staged; uploads finish in the background (fsync "
       "of a directory or unmount waits for them)"},
      {"direct-io", false, Flag(&fs::FsConfig::direct_io),
       "bypass the page cache (faster big reads; no MAP_SHARED mmap)"},
      {"max-memory", true, Budget(&fs::FsConfig::max_memory),
       "SIZE of all read-ahead data (RAM/4 within 256M..4G)"},
      {"max-upload-memory", true, Budget(&fs::FsConfig::max_upload_memory),
       "SIZE of part buffers of all files being written (256M)"},
      {"upload-concurrency", true,
       Count(&fs::FsConfig::max_upload_parts_in_flight, "upload-concurrency", 1, 64),
       "N parts of each file being written uploaded at once (4)"},
      {"max-threads", true,
       [](Builder& b, std::string_view v) -> Status {
         auto n = ParseInt<int>(v, "max-threads", 1, 1024);
         if (!n) return n.error();
         b.opts.fs.max_threads = *n;
         b.opts.fuse.max_threads = *n;
         return Status::Ok();
       },
       "N FUSE worker threads (16)"},
      {"gets-on-fuse-threads", true,
       Count(&fs::FsConfig::gets_on_fuse_threads, "gets-on-fuse-threads", 0, 1024),
       "N random reads' GETs run on their own FUSE thread (0)"},
      // Process.
      {"log-level", true,
       [](Builder& b, std::string_view v) -> Status {
         auto level = ParseLogLevel(v);
         if (!level) return level.error();
         b.opts.log.level = *level;
         b.log_level_set = true;
         return Status::Ok();
       },
       "trace|debug|info|warn|error|off (info)"},
      {"log-file", true,
       [](Builder& b, std::string_view v) -> Status {
         if (v.empty()) return UsageError("empty file name");
         b.opts.log.file = std::string(v);
         return Status::Ok();
       },
       "FILE to append the log to"},
      {"foreground", false,
       [](Builder& b, std::string_view) {
         b.opts.fuse.foreground = true;
         return Status::Ok();
       },
       "(-f) stay in the foreground"},
      {"debug", false,
       [](Builder& b, std::string_view) {
         b.debug = true;
         return Status::Ok();
       },
       "(-d) foreground, debug log and libfuse's request trace"},
      {"nonempty", false,
       [](Builder& b, std::string_view) {
         b.opts.allow_nonempty = true;
         return Status::Ok();
       },
       "allow mounting over a non-empty directory"},
  };
  return specs;
}

const OptionSpec* FindByFlag(std::string_view name) {
  for (const auto& spec : Specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const OptionSpec* FindByFstab(std::string_view name) {
  for (const auto& spec : Specs()) {
    if (Underscored(spec.name) == name) return &spec;
  }
  return nullptr;
}

// Generic mount(8)/fstab options with no meaning for bucketfs.
bool IsIgnoredMountOption(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kIgnored = {
      "defaults", "auto",  "noauto",  "user",   "nouser",  "users",
      "owner",    "group", "_netdev", "nofail", "noadmin", "loud"};
  if (std::find(kIgnored.begin(), kIgnored.end(), name) != kIgnored.end()) return true;
  return StartsWith(name, "x-") || StartsWith(name, "comment");
}

// Options handed to libfuse as they are: kernel mount flags and the libfuse
// mount options the low-level API understands.
bool IsPassthroughOption(std::string_view name) {
  static constexpr std::array<std::string_view, 21> kPassthrough = {
      "dev",         "nodev",      "suid",        "nosuid",   "exec",
      "noexec",      "atime",      "noatime",     "diratime", "nodiratime",
      "relatime",    "norelatime", "strictatime", "sync",     "async",
      "dirsync",     "fsname",     "subtype",     "max_read", "default_permissions",
      "auto_unmount"};
  return std::find(kPassthrough.begin(), kPassthrough.end(), name) != kPassthrough.end() ||
         name == "context" || name == "fscontext" || name == "defcontext" ||
         name == "rootcontext" || name == "blksize";
}

Status Apply(Builder& b, const OptionSpec& spec, std::string_view shown,
             std::optional<std::string_view> value) {
  if (spec.takes_value && !value) return UsageError(StrCat({"option '", shown, "' needs a value"}));
  if (!spec.takes_value && value) {
    return UsageError(StrCat({"option '", shown, "' takes no value"}));
  }
  Status s = spec.set(b, value.value_or(""));
  if (!s.ok()) {
    return UsageError(StrCat({"option '", shown, "': ", s.error().message}));
  }
  return Status::Ok();
}

// One entry of a -o list: "name" or "name=value".
Status ApplyFstabOption(Builder& b, std::string_view item) {
  if (item.empty()) return Status::Ok();
  auto eq = item.find('=');
  std::string_view name = item.substr(0, eq);
  std::optional<std::string_view> value;
  if (eq != std::string_view::npos) value = item.substr(eq + 1);

  if (name == "ro" && !value) {
    b.opts.fs.read_only = true;
    return Status::Ok();
  }
  if (name == "rw" && !value) {
    b.opts.fs.read_only = false;
    return Status::Ok();
  }
  if (const OptionSpec* spec = FindByFstab(name)) return Apply(b, *spec, name, value);
  if (IsIgnoredMountOption(name) || (name == "user" && value)) return Status::Ok();
  if (IsPassthroughOption(name)) {
    b.opts.fuse.fuse_options.emplace_back(item);
    return Status::Ok();
  }
  return UsageError(StrCat({"unknown mount option '", name, "' (see bucketfs --help)"}));
}

Status ApplyFstabList(Builder& b, std::string_view list) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    Status s = ApplyFstabOption(b, list.substr(start, comma - start));
    if (!s.ok()) return s;
    start = comma + 1;
  }
  return Status::Ok();
}

Result<MountOptions> Finish(Builder&& b) {
  if (b.positionals.size() != 2) {
    return UsageError(b.positionals.size() < 2
                          ? "expected SOURCE and MOUNTPOINT (bucketfs s3://BUCKET[/PREFIX] DIR)"
                          : StrCat({"unexpected argument '", b.positionals[2], "'"}));
  }
  MountOptions& o = b.opts;
  o.source = b.positionals[0];
  auto source = ParseMountSource(o.source);
  if (!source) return source.error();
  o.fs.bucket = source->bucket;
  o.fs.prefix = source->prefix;
  if (b.prefix_flag) {
    if (!o.fs.prefix.empty()) {
      return UsageError("the prefix is given twice (in SOURCE and with --prefix)");
    }
    o.fs.prefix = *b.prefix_flag;
    if (!o.fs.prefix.empty() && o.fs.prefix.back() != '/') o.fs.prefix += '/';
  }
  if (o.fs.bucket.empty() && !o.fs.prefix.empty()) {
    return UsageError("--prefix needs a bucket (s3://BUCKET/PREFIX)");
  }
  o.fuse.mountpoint = b.positionals[1];
  if (o.fuse.mountpoint.empty()) return UsageError("empty MOUNTPOINT");
  if (o.fuse.allow_other && o.fuse.allow_root) {
    return UsageError("allow-other and allow-root cannot be combined");
  }
  // A sequential reader needs a part being served and one in flight; less
  // than that would only ever read with requests forced past the budget.
  if (o.fs.max_memory != 0 && o.fs.max_memory < 2 * o.fs.read_part_size) {
    return UsageError(StrCat({"option '--max-memory': ", ShowSize(o.fs.max_memory),
                              " is less than two read parts (2 x ", ShowSize(o.fs.read_part_size),
                              ", see --read-part-size)"}));
  }
  // A writer fills one part while another uploads.
  if (o.fs.max_upload_memory != 0 && o.fs.max_upload_memory < 2 * o.fs.write_part_size) {
    return UsageError(StrCat({"option '--max-upload-memory': ", ShowSize(o.fs.max_upload_memory),
                              " is less than two upload parts (2 x ",
                              ShowSize(o.fs.write_part_size), ", see --part-size)"}));
  }
  if (b.debug) {
    o.fuse.foreground = true;
    o.fuse.debug = true;
    if (!b.log_level_set) o.log.level = spdlog::level::debug;
  }
  return std::move(o);
}

}  // namespace

Result<MountSource> ParseMountSource(std::string_view text) {
  constexpr std::string_view kScheme = "s3://";
  if (!StartsWith(text, kScheme)) {
    return UsageError(
        StrCat({"SOURCE '", text, "' must look like s3://BUCKET, s3://BUCKET/PREFIX or s3://"}));
  }
  std::string_view rest = text.substr(kScheme.size());
  MountSource out;
  auto slash = rest.find('/');
  out.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) out.prefix = std::string(rest.substr(slash + 1));
  if (out.bucket.empty() && slash != std::string_view::npos) {
    return UsageError(StrCat({"SOURCE '", text, "' has an empty bucket name"}));
  }
  if (!out.prefix.empty() && out.prefix.back() != '/') out.prefix += '/';
  return out;
}

Result<double> ParseTtl(std::string_view text) {
  if (text == "indefinite") return kIndefiniteTtlSeconds;
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0 ||
      v > kIndefiniteTtlSeconds) {
    return UsageError(StrCat({"'", s, "' is not a number of seconds or 'indefinite'"}));
  }
  return v;
}

Result<uint64_t> ParseSize(std::string_view text) {
  auto size = ParseByteSize(text);
  if (!size.ok()) return UsageError(size.error().message);
  return *size;
}

Result<mode_t> ParseMode(std::string_view text) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 8);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v > 07777) {
    return UsageError(StrCat({"'", text, "' is not an octal mode like 0644"}));
  }
  return static_cast<mode_t>(v);
}

Result<spdlog::level::level_enum> ParseLogLevel(std::string_view text) {
  using spdlog::level::level_enum;
  static constexpr std::array<std::pair<std::string_view, level_enum>, 8> kLevels = {{
      {"trace", level_enum::trace},
      {"debug", level_enum::debug},
      {"info", level_enum::info},
      {"warn", level_enum::warn},
      {"warning", level_enum::warn},
      {"error", level_enum::err},
      {"critical", level_enum::critical},
      {"off", level_enum::off},
  }};
  for (const auto& [name, level] : kLevels) {
    if (name == text) return level;
  }
  return UsageError(StrCat({"'", text, "' is not a log level (trace|debug|info|warn|error|off)"}));
}

Result<ParsedMountCommand> ParseMountCommand(const std::vector<std::string>& args,
                                             const MountDefaults& defaults) {
  Builder b;
  b.opts.fs.uid = defaults.uid;
  b.opts.fs.gid = defaults.gid;
  b.opts.fuse.foreground = false;
  b.opts.fuse.max_threads = b.opts.fs.max_threads;
  bool only_positionals = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    auto next_value = [&](std::string_view shown) -> Result<std::string_view> {
      if (i + 1 >= args.size()) return UsageError(StrCat({"option '", shown, "' needs a value"}));
      return std::string_view(args[++i]);
    };
    if (only_positionals || arg.empty() || arg[0] != '-' || arg == "-") {
      b.positionals.emplace_back(arg);
    } else if (arg == "--") {
      only_positionals = true;
    } else if (arg == "--help" || arg == "-h") {
      return ParsedMountCommand{.help = true};
    } else if (arg == "-f") {
      b.opts.fuse.foreground = true;
    } else if (arg == "-d") {
      b.debug = true;
    } else if (StartsWith(arg, "-o")) {
      std::string_view list = arg.substr(2);
      if (list.empty()) {
        auto v = next_value("-o");
        if (!v) return v.error();
        list = *v;
      }
      if (Status s = ApplyFstabList(b, list); !s.ok()) return s.error();
    } else if (StartsWith(arg, "--")) {
      std::string_view body = arg.substr(2);
      auto eq = body.find('=');
      std::string_view name = body.substr(0, eq);
      const OptionSpec* spec = FindByFlag(name);
      if (spec == nullptr) {
        return UsageError(StrCat({"unknown option '--", name, "' (see bucketfs --help)"}));
      }
      std::optional<std::string_view> value;
      if (eq != std::string_view::npos) {
        value = body.substr(eq + 1);
      } else if (spec->takes_value) {
        auto v = next_value(arg);
        if (!v) return v.error();
        value = *v;
      }
      if (Status s = Apply(
              b, *spec, arg.substr(0, eq == std::string_view::npos ? arg.size() : eq + 2), value);
          !s.ok()) {
        return s.error();
      }
    } else {
      return UsageError(StrCat({"unknown option '", arg, "' (see bucketfs --help)"}));
    }
  }
  auto options = Finish(std::move(b));
  if (!options) return options.error();
  return ParsedMountCommand{.help = false, .options = std::move(*options)};
}

std::string MountUsage() {
  std::string out =
      "usage: bucketfs s3://BUCKET[/PREFIX] MOUNTPOINT [options]\n"
      "       bucketfs s3:// MOUNTPOINT [options]      (every bucket as a directory)\n"
      "\n"
      "Mounts the bucket and detaches once the mount is serving; unmount with\n"
      "`fusermount3 -u MOUNTPOINT` or `umount MOUNTPOINT`.\n"
      "\n"
      "Options (each also as -o NAME[=VALUE] with '-' written '_', for fstab):\n";
  for (const auto& spec : Specs()) {
    std::string flag = StrCat({"  --", spec.name, spec.takes_value ? " VALUE" : ""});
    if (flag.size() < 26) flag.resize(26, ' ');
    out += StrCat({flag, " ", spec.help, "\n"});
  }
  out +=
      "  -f                       stay in the foreground\n"
      "  -d                       debug (implies -f)\n"
      "  -o OPT[,OPT...]          options above, ro/rw, generic mount options\n"
      "                           (defaults, auto, noauto, user, _netdev, nofail,\n"
      "                           x-systemd.*: ignored; nodev, nosuid, noexec,\n"
      "                           noatime, ...: passed to the kernel) and libfuse's\n"
      "                           fsname=, subtype=, default_permissions, max_read=,\n"
      "                           auto_unmount\n"
      "  -h, --help               this text\n"
      "\n"
      "Credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws/credentials\n"
      "(--profile), or --no-sign-request. See docs/SEMANTICS.md and docs/MOUNTING.md.\n";
  return out;
}

}  // namespace bucketfs::tools
