// The composition root of a mount: the one place that builds the read path,
// the write-back and the filesystem core over one S3 client and wires them
// together as the mount's options ask. The FUSE session only runs what this
// built (fuse-adapter/fuse_session.h).
#pragma once

#include <memory>

#include "fuse/filesystem.h"
#include "fuse/fs_config.h"
#include "metrics/registry.h"
#include "s3/object_client.h"

namespace bucketfs::tools {

// Reads through the prefetcher (or one ranged GET per read when
// config.prefetch is false), writes through the staged write-back.
// `registry` (may be null) receives the series the components already count
// (mount_metrics.h); it must outlive them.
// REQUIRES: client != nullptr
fs::FsComponents BuildComponents(const std::shared_ptr<s3::ObjectClient>& client,
                                 const fs::FsConfig& config, metrics::Registry* registry = nullptr);

// `journal` (may be null) records what a restarted daemon needs to take the
// mount over (handover/session_journal.h); `registry` (may be null) gets the
// components' metrics.
std::unique_ptr<fs::Filesystem> BuildFilesystem(
    std::shared_ptr<s3::ObjectClient> client, const fs::FsConfig& config,
    std::shared_ptr<handover::SessionJournal> journal = nullptr,
    metrics::Registry* registry = nullptr);

}  // namespace bucketfs::tools
