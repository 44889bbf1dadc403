// Filesystem: mknod. A special file is an empty object whose user metadata
// (s3fs's names) holds its type, permissions and device number, so s3fs and
// other bucketfs mounts with --preserve-attrs show the same node.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "fuse/filesystem.h"
#include "fuse/object_type.h"

namespace bucketfs::fs {

Result<Entry> Filesystem::Mknod(Ino parent, const std::string& name, mode_t mode, dev_t rdev) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  if (Status s = CheckWritable(*dir, name); !s.ok()) return s.error();
  const bool special = IsSpecialMode(mode);
  if (!special && !S_ISREG(mode)) return MakeError(EINVAL, "BadFileType", name);
  if (special && !config_.preserve_attrs) {
    return MakeError(EPERM, "NeedsPreserveAttrs",
                     "FIFOs, sockets and device nodes are kept in object metadata: mount with "
                     "--preserve-attrs to create " +
                         name);
  }
  const std::string key = dir->key + name;
  // As for symlink: the kernel checked the name is free; only a file still
  // being written here can hide from it.
  WaitForUpload(dir->bucket, key);
  if (local_.FileAttrs(dir->bucket, key)) return MakeError(EEXIST, "Exists", key);
  const auto now = std::chrono::system_clock::now();
  ObjectAttrs attrs{0, now, "", std::chrono::steady_clock::now(),
                    special ? ObjectType::kSpecial : ObjectType::kRegular};
  if (config_.preserve_attrs) {
    attrs.mode = static_cast<uint32_t>(mode);
    attrs.meta_mtime = std::chrono::time_point_cast<std::chrono::seconds>(now);
    attrs.rdev = special && (S_ISCHR(mode) || S_ISBLK(mode)) ? static_cast<uint64_t>(rdev) : 0;
  }
  s3::PutObjectParams p;
  p.bucket = dir->bucket;
  p.key = key;
  if (config_.preserve_attrs) WritePosixMetadata(attrs, p.metadata);
  auto r = client_->PutObject(p, {});
  if (!r.ok()) {
    spdlog::warn("PutObject (mknod) s3://{}/{}: {}", p.bucket, p.key, r.error().ToString());
    return r.error();
  }
  attrs.etag = r->etag;
  attrs.metadata_known = true;
  return EnterNewObject(*dir, name, attrs);
}

}  // namespace bucketfs::fs
