// The `order` command of a mount's control socket: a loader announces the
// order in which it will open files (mount-tools/bucketfs_order.py sends it).
//   order reset            forget the current order
//   order add PATH...      append paths (relative to the mountpoint,
//                          percent-encoded: %20 for a space, %25 for '%')
//   order status           announced=, opened=, cursor=, resolved=
// Lines are at most 4096 bytes: a long order is sent as many `add` lines.
#pragma once

#include <string>
#include <string_view>

#include "fuse/filesystem.h"
#include "mount-tools/control_socket.h"
#include "s3/result.h"

namespace bucketfs::tools {

// "%20" -> " "; an incomplete or non-hex escape is an error.
Result<std::string> PercentDecode(std::string_view text);

Result<ControlAnswer> HandleOrderCommand(fs::Filesystem& filesystem, const ControlRequest& request);

}  // namespace bucketfs::tools
