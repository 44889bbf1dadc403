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
#include "mount-tools/mount_option_table.h"
#include "mount-tools/str_cat.h"
#include "s3/s3_limits.h"

namespace bucketfs::tools {
namespace {

using option_table::Builder;
using option_table::FindByFlag;
using option_table::FindByFstab;
using option_table::OptionSpec;
using option_table::ShowSize;
using option_table::Specs;
using option_table::Underscored;
using option_table::UsageError;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

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
