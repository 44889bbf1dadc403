// Kernel readahead of a FUSE mount.
//
// The kernel gives a FUSE mount the block-device default of 128 KiB readahead
// and takes min(that, the max_readahead the daemon answers INIT with), so a
// larger max_readahead alone changes nothing: a 1 MiB sequential read arrives
// as eight 128 KiB READ requests. The mount's BDI setting
// (/sys/class/bdi/MAJ:MIN/read_ahead_kb) is what raises it. Writing it between
// the mount and the INIT reply makes the min the value we asked for; then
// READs arrive as large as max_pages allows (1 MiB) with several in flight.
// Writing the file needs root; without it the mount keeps the default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "s3/result.h"

namespace bucketfs::fs {

// The "MAJ:MIN" device of the last mount at `mountpoint` (an absolute,
// canonical path) in a /proc/self/mountinfo text, or nullopt.
std::optional<std::string> MountDeviceFromMountinfo(std::string_view mountinfo,
                                                    const std::string& mountpoint);

// Sets read_ahead_kb of the mount at `mountpoint` (canonical path) to `bytes`.
// Never touches the mount itself (no stat: its requests are not served yet).
Status SetMountReadahead(const std::string& mountpoint, uint64_t bytes);

}  // namespace bucketfs::fs
