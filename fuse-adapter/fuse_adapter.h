// The libfuse3 low-level operations table over a Filesystem. Each callback
// calls one core method and replies with its result, or with the errno its
// Error carries. The session's userdata must be a SessionData*.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cstdint>

#include "fuse-adapter/fuse_observer.h"
#include "prefetch/prefetch_config.h"

namespace bucketfs::fs {

class Filesystem;
class InitFlagsIo;
class PassthroughTable;

// The session's userdata.
struct SessionData {
  Filesystem* fs = nullptr;
  InitFlagsIo* init_io = nullptr;    // the /dev/fuse I/O, when installed (init_flags_io.h)
  FuseObserver* observer = nullptr;  // hears of every answer, when set
  // Opens and releases, when passthrough was asked for (passthrough.h); used
  // only once the INIT reply carried FUSE_PASSTHROUGH.
  PassthroughTable* passthrough = nullptr;
};

// The kernel readahead the adapter asks for at INIT (see mount_readahead.h;
// the session sets the mount's BDI to the same value before INIT): the one
// the read path's policy assumes.
inline constexpr uint32_t kMaxReadahead = prefetch::kKernelReadahead;

// Largest READ and WRITE: libfuse 3.14's limit of 256 pages. The session's
// max_read mount option must carry the same value.
inline constexpr uint32_t kMaxIo = 1u << 20;

// The INIT settings that shape how data moves (request sizes, readahead,
// asynchronous READs in flight, no kernel write-back cache), apart from
// directory listing. bucketfs's Init applies them, and so does the nullfs
// benchmark daemon (tests/nullfs), so that its ceiling is bucketfs's.
void WantTransportSettings(fuse_conn_info* conn);

// The operations table (a constant; the Filesystem comes in the userdata).
const fuse_lowlevel_ops& FuseOperations();

}  // namespace bucketfs::fs
