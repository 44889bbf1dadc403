// Filesystem: symlink and readlink. A link is an object whose body is its
// target, marked by s3fs's x-amz-meta-mode (object_type.h).
#include <spdlog/spdlog.h>

#include <vector>

#include "fuse/filesystem.h"
#include "fuse/object_type.h"

namespace bucketfs::fs {

Result<Entry> Filesystem::Symlink(const std::string& target, Ino parent, const std::string& name) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  if (Status s = CheckWritable(*dir, name); !s.ok()) return s.error();
  if (target.empty()) return MakeError(ENOENT, "EmptyTarget", "a link needs a target");
  if (target.size() > kMaxLinkTargetSize) return MakeError(ENAMETOOLONG, "NameTooLong", target);
  const std::string key = dir->key + name;
  // The kernel looked the name up first and calls symlink only when it is
  // free; a file still being written here is the one thing it cannot see.
  WaitForUpload(dir->bucket, key);
  if (local_.FileAttrs(dir->bucket, key)) return MakeError(EEXIST, "Exists", key);
  const auto now = std::chrono::system_clock::now();
  s3::PutObjectParams p;
  p.bucket = dir->bucket;
  p.key = key;
  p.metadata = LinkMetadata(now);
  auto r = client_->PutObject(p, std::as_bytes(std::span(target.data(), target.size())));
  if (!r.ok()) {
    spdlog::warn("PutObject (symlink) s3://{}/{}: {}", p.bucket, p.key, r.error().ToString());
    return r.error();
  }
  ObjectAttrs attrs{target.size(),     now,   r->etag, std::chrono::steady_clock::now(),
                    ObjectType::kLink, target};
  attrs.mode = kLinkMode;  // what it was written with
  attrs.metadata_known = true;
  return EnterNewObject(*dir, name, attrs);
}

Entry Filesystem::EnterNewObject(const InodeSnapshot& dir, const std::string& name,
                                 const ObjectAttrs& attrs) {
  const std::string key = dir.key + name;
  ReplacedObject(dir.bucket, key);
  names_.Wrote(dir.bucket, dir.key, name, attrs);
  if (meta_) meta_->Changed(dir.bucket, key);
  const Ino ino = inodes_.Acquire(dir.ino, name, Kind::kFile, dir.bucket, key, attrs);
  return MakeEntry(ino, Kind::kFile, attrs);
}

Result<std::string> Filesystem::ReadLink(Ino ino) {
  auto in = inodes_.Get(ino);
  if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  if (in->kind != Kind::kFile) return MakeError(EINVAL, "NotALink", in->key);
  auto attrs = HeadFresh(*in);
  if (!attrs.ok()) return attrs.error();
  if (attrs->type != ObjectType::kLink) return MakeError(EINVAL, "NotALink", in->key);
  if (!attrs->link_target.empty()) return attrs->link_target;
  if (attrs->size == 0 || attrs->size > kMaxLinkTargetSize) {
    return MakeError(
        EIO, "BadLink",
        "s3://" + in->bucket + "/" + in->key + ": a link's body must be a path of 1 to 4095 bytes");
  }
  std::vector<std::byte> body(attrs->size);
  s3::GetObjectParams p;
  p.bucket = in->bucket;
  p.key = in->key;
  p.offset = 0;
  p.length = attrs->size;
  p.if_match = attrs->etag;
  auto r = client_->GetObject(p, body);
  if (!r.ok()) {
    spdlog::warn("GetObject (readlink) s3://{}/{}: {}", p.bucket, p.key, r.error().ToString());
    return r.error();
  }
  std::string target(reinterpret_cast<const char*>(body.data()), body.size());
  ObjectAttrs known = *attrs;
  known.link_target = target;
  inodes_.SetAttrs(ino, known);
  return target;
}

}  // namespace bucketfs::fs
