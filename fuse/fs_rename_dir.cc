// Filesystem: rename of a directory. S3 has no directories, so this copies
// every key under the prefix and then deletes the sources: not atomic, and
// bounded by dir_rename_max_keys. Refused with EXDEV unless allow_dir_rename
// (mv then falls back to copying the tree itself).
#include <spdlog/spdlog.h>

#include "fuse/filesystem.h"

namespace bucketfs::fs {

Status Filesystem::RenameDir(const InodeSnapshot& src_dir, const std::string& name,
                             const Resolved& src, const InodeSnapshot& dst_dir,
                             const std::string& new_name, bool dst_exists) {
  if (!config_.allow_dir_rename) {
    return MakeError(EXDEV, "DirRename", "mount with --allow-dir-rename to rename directories");
  }
  const std::string dst_key = dst_dir.key + new_name + "/";
  if (src.bucket == dst_dir.bucket && dst_key.compare(0, src.key.size(), src.key) == 0) {
    return MakeError(EINVAL, "IntoItself", "cannot move a directory into itself");
  }
  if (local_.HasFilesUnder(src.bucket, src.key)) return MakeError(EBUSY, "Busy", src.key);
  if (dst_exists) {
    s3::ListObjectsV2Params p;
    p.bucket = dst_dir.bucket;
    p.prefix = dst_key;
    p.max_keys = 2;
    auto r = client_->ListObjectsV2(p);
    if (!r.ok()) return r.error();
    for (const auto& o : r->objects) {
      if (o.key != dst_key) return MakeError(ENOTEMPTY, "NotEmpty", dst_key);
    }
    if (local_.HasAnythingUnder(dst_dir.bucket, dst_key)) {
      return MakeError(ENOTEMPTY, "NotEmpty", dst_key);
    }
  }
  // Every key under the source, bounded.
  std::vector<std::string> keys;
  s3::ListObjectsV2Params p;
  p.bucket = src.bucket;
  p.prefix = src.key;
  do {
    auto r = client_->ListObjectsV2(p);
    if (!r.ok()) {
      spdlog::warn("ListObjectsV2 s3://{}/{}: {}", p.bucket, p.prefix, r.error().ToString());
      return r.error();
    }
    for (const auto& o : r->objects) keys.push_back(o.key);
    if (keys.size() > config_.dir_rename_max_keys) {
      spdlog::warn("rename of s3://{}/{} refused: more than {} keys", src.bucket, src.key,
                   config_.dir_rename_max_keys);
      return MakeError(EXDEV, "DirTooLarge", "directory too large to rename");
    }
    p.continuation_token = r->is_truncated ? r->next_continuation_token : "";
  } while (!p.continuation_token.empty());

  for (const auto& key : keys) {
    auto copied =
        CopyObject(src.bucket, key, dst_dir.bucket, dst_key + key.substr(src.key.size()), {});
    if (!copied.ok()) return copied.error();  // sources untouched; the partial copy stays visible
  }
  for (size_t i = 0; i < keys.size(); i += 1000) {
    s3::DeleteObjectsParams d;
    d.bucket = src.bucket;
    d.keys.assign(keys.begin() + static_cast<long>(i),
                  keys.begin() + static_cast<long>(std::min(keys.size(), i + 1000)));
    auto r = client_->DeleteObjects(d);
    if (!r.ok()) {
      spdlog::warn("DeleteObjects s3://{}/{}: {}", src.bucket, src.key, r.error().ToString());
      return r.error();
    }
    if (!r->failed.empty()) {
      spdlog::warn("DeleteObjects s3://{}/{}: {} key(s) not deleted, first {}: {}", src.bucket,
                   src.key, r->failed.size(), r->failed[0].first, r->failed[0].second.ToString());
      return r->failed[0].second;
    }
  }
  local_.RenameDirs(src.bucket, src.key, dst_dir.bucket, dst_key);
  names_.ForgetTree(src.bucket, src.key);
  names_.ForgetTree(dst_dir.bucket, dst_key);
  names_.Removed(src.bucket, src_dir.key, name);
  names_.StoreDir(dst_dir.bucket, dst_dir.key, new_name, std::chrono::steady_clock::now());
  if (meta_) {
    meta_->ChangedTree(src.bucket, src.key);
    meta_->ChangedTree(dst_dir.bucket, dst_key);
  }
  inodes_.Rename(src_dir.ino, name, dst_dir.ino, new_name, dst_dir.bucket, dst_key);
  return Status::Ok();
}

}  // namespace bucketfs::fs
