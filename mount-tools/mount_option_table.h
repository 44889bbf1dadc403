// The table of bucketfs's mount options (flag and fstab spellings, value
// parsing, help text) and the helpers its rows share; mount_options.cc walks
// the command line and the -o lists with it. Internal to mount-tools/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mount-tools/mount_options.h"

namespace bucketfs::tools::option_table {

Error UsageError(std::string message);
// The fstab spelling of a flag name: dashes become underscores.
std::string Underscored(std::string_view name);
// "16 MiB", "96 KiB", "1000 bytes": exact, for messages.
std::string ShowSize(uint64_t bytes);

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

const std::vector<OptionSpec>& Specs();
const OptionSpec* FindByFlag(std::string_view name);
const OptionSpec* FindByFstab(std::string_view name);

}  // namespace bucketfs::tools::option_table
