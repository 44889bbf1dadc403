// The `status` answer of a mount's control socket: a key=value summary of
// its metrics (totals and gauges), and the text `bucketfs status` shows from
// two of them (rates are differences over the time between them). Pure,
// unit-tested.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "metrics/registry.h"

namespace bucketfs::tools {

struct MountIdentity {
  std::string mountpoint;
  std::string source;  // s3://bucket/prefix
  long pid = 0;
  std::chrono::steady_clock::time_point started;
};

using Snapshot = std::map<std::string, std::string>;

// key=value lines: mountpoint, source, pid, uptime_seconds, time_ms,
// fuse_read_bytes, fuse_write_bytes, fuse_ops, fuse_errors, s3_requests,
// s3_requests.<OP>, s3_in_flight, s3_failed, s3_retries, memory_bytes,
// memory_limit_bytes, uploads_in_flight, cache_hits, cache_misses,
// prefetch_hits, prefetch_misses.
std::string StatusSnapshotText(const metrics::Registry& registry, const MountIdentity& id,
                               std::chrono::steady_clock::time_point now);

// The view of one mount: rates from `before` to `now` (none without `before`).
std::string RenderStatus(const Snapshot& now, const Snapshot* before);

}  // namespace bucketfs::tools
