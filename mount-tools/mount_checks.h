// Checks run before mounting, so that a wrong mountpoint, a missing bucket or
// bad credentials fail `bucketfs` at once with a message a person can act on,
// instead of surfacing later as EIO on the first `ls`.
#pragma once

#include <string>

#include "fuse/fs_config.h"
#include "mount-tools/mount_options.h"
#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::tools {

// Makes the mountpoint, --log-file, --cache and --ca-bundle paths absolute
// (lexically: a stale mountpoint cannot be resolved), since the detached
// process runs in "/".
void MakePathsAbsolute(MountOptions& options);

// The mountpoint exists, is a directory and is empty (unless
// allow_nonempty). "/dev/fd/N" (a FUSE fd passed by mount.fuse3's
// drop_privileges) is accepted as is.
Status CheckMountpoint(const std::string& mountpoint, bool allow_nonempty);

// One cheap request proving the bucket exists and the credentials work:
// ListObjectsV2 with max-keys 1 under the prefix, or ListBuckets for "s3://".
Status CheckBucketAccess(s3::ObjectClient& client, const fs::FsConfig& config);

// The message for a failed bucket check: "bucket 'x' does not exist",
// "access to bucket 'x' was refused ...", or the request's failure.
std::string DescribeBucketError(const std::string& bucket, const Error& error);

}  // namespace bucketfs::tools
