// The libfuse3 low-level operations table over a Filesystem. Each callback
// calls one core method and replies with its result, or with the errno its
// Error carries. The session's userdata must be the Filesystem*.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace bucketfs::fs {

// The operations table (a constant; the Filesystem comes as userdata).
const fuse_lowlevel_ops& FuseOperations();

}  // namespace bucketfs::fs
