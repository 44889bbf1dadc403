// RunFuseSession: the libfuse3 edge of bucketfs. It builds the filesystem core
// over an ObjectClient, mounts it with libfuse's low-level API, serves requests
// on a multithreaded loop, and when the loop ends (SIGTERM/SIGINT/SIGHUP, or
// `fusermount3 -u` / `umount` from outside) finishes every open upload before
// it unmounts and returns.
//
// The mount command (mount-tools/) owns option parsing, daemonizing and
// logging setup; it calls this once and exits with its return value.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fuse/file_reader.h"
#include "fuse/file_writer.h"
#include "fuse/fs_config.h"
#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::fs {

struct FuseMountOptions {
  std::string mountpoint;
  bool allow_other = false;
  bool allow_root = false;
  bool foreground = true;  // informational: daemonizing is the caller's job
  // Raw -o entries passed to libfuse, e.g. "fsname=bucketfs", "default_permissions".
  std::vector<std::string> fuse_options;
  int max_threads = 16;  // max idle worker threads of the session loop
  bool debug = false;    // libfuse's own request trace ("-d") on stderr
};

// Replaceable parts of the core; null members get the defaults: reads go
// through a Prefetcher over `client` (or direct ranged GETs when
// FsConfig::prefetch is false), writes through the staged write-back
// (upload/, through fuse/staged_writer_factory.h; made by the Filesystem).
struct FsComponents {
  std::shared_ptr<FileReaderFactory> readers;
  std::shared_ptr<FileWriterFactory> writers;
};

// Mounts `config` at `mount.mountpoint` and serves it until unmounted or
// signalled. `on_mount_result` (may be empty) is called exactly once: with
// Ok once the mount is serving, or with the error when mounting failed (the
// daemonizing parent waits on it). Returns the process exit code: 0 on a
// clean unmount, non-zero when mounting failed or uploads could not finish.
// REQUIRES: client != nullptr
int RunFuseSession(std::shared_ptr<s3::ObjectClient> client, const FsConfig& config,
                   const FuseMountOptions& mount, std::function<void(Status)> on_mount_result);
int RunFuseSession(std::shared_ptr<s3::ObjectClient> client, const FsConfig& config,
                   const FuseMountOptions& mount, std::function<void(Status)> on_mount_result,
                   FsComponents components);

}  // namespace bucketfs::fs
