// How an object's file type lives in S3, in s3fs-fuse's convention, so that a
// bucket mounted by both shows the same symbolic links: a link is an object
// whose body is the target path and whose user metadata `mode` holds
// S_IFLNK|0777 in decimal ("41471"). A FIFO, socket or device node is an
// empty object whose mode holds its type (and x-amz-meta-rdev a device's
// number). Other values, a missing or malformed mode, are regular files.
//
// LIST returns no user metadata: an object known from a listing is a regular
// file for sure only when its size rules out a link's body (empty, or longer
// than a path); otherwise its type is unknown until a HeadObject says.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>

#include "fuse/inode_table.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

// PATH_MAX less the terminating NUL: the longest target symlink(2) accepts.
inline constexpr uint64_t kMaxLinkTargetSize = 4095;
inline constexpr mode_t kLinkMode = S_IFLNK | 0777;

// The type a HeadObject's metadata gives.
ObjectType TypeFromMetadata(const s3::UserMetadata& metadata);
// The type a listed object of `size` bytes is known to have.
ObjectType TypeFromListing(uint64_t size);
// True for the types mknod makes besides regular files.
bool IsSpecialMode(uint32_t mode);
// The S_IFMT bits an object of these attributes shows.
uint32_t TypeBits(const ObjectAttrs& attrs);
// The metadata a link made now is written with (s3fs reads mode and mtime).
s3::UserMetadata LinkMetadata(std::chrono::system_clock::time_point now);

// --preserve-attrs: `attrs` with mode, uid, gid and mtime from s3fs's names
// (x-amz-meta-mode, -uid, -gid, -mtime in decimal seconds); a missing or
// malformed value stays unset. Marks the metadata known.
void ReadPosixMetadata(const s3::UserMetadata& metadata, ObjectAttrs& attrs);
// `metadata` with the attributes `attrs` holds written in (others kept).
void WritePosixMetadata(const ObjectAttrs& attrs, s3::UserMetadata& metadata);

}  // namespace bucketfs::fs
