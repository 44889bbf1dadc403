// Filesystem: rename of a file closed on an --async-close mount whose upload
// still runs (write to a temporary name, close, rename: zarr, many writers).
// The rename returns at once: the new name takes the file's place in this
// mount, and a step chained after the upload copies the object to it and
// deletes the old key, so both requests leave the caller's path too.
#include <spdlog/spdlog.h>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"

namespace bucketfs::fs {

std::optional<Status> Filesystem::RenameUploading(const Resolved& src, const InodeSnapshot& src_dir,
                                                  const std::string& name,
                                                  const InodeSnapshot& dst_dir,
                                                  const std::string& new_name) {
  std::shared_ptr<FileHandle> h;
  {
    MutexLock lock(handles_mu_);
    auto it = uploading_.find({src.bucket, src.key});
    if (it == uploading_.end()) return std::nullopt;
    h = it->second;
  }
  const std::string dst_key = dst_dir.key + new_name;
  // Held until the name has moved: the upload cannot record its outcome
  // (CommitHandle) or run the chained step before that.
  MutexLock lock(h->publish_mu);
  if (h->published || h->moved) return std::nullopt;
  auto move = [this, h, src_bucket = src.bucket, src_key = src.key, src_dir_key = src_dir.key, name,
               dst_bucket = dst_dir.bucket, dst_key, dst_dir_key = dst_dir.key,
               new_name](Status uploaded) -> Status {
    std::optional<ObjectAttrs> known;
    {
      MutexLock published(h->publish_mu);
      known = h->committed;
    }
    Status s = std::move(uploaded);
    std::optional<ObjectAttrs> copy;
    if (s.ok()) {
      auto c = CopyObject(src_bucket, src_key, dst_bucket, dst_key, known);
      if (c.ok()) {
        copy = *c;
        s = client_->DeleteObject({src_bucket, src_key});
      } else {
        s = c.error();
      }
    }
    // The inode moved to the new name at the rename; it gets the copy's ETag.
    inodes_.SetAttrs(h->ino, copy ? *copy : ObjectAttrs{});
    if (copy) {
      ReplacedObject(dst_bucket, dst_key);
      names_.Wrote(dst_bucket, dst_dir_key, new_name, *copy);
    } else {
      names_.Drop(dst_bucket, dst_dir_key, new_name);
    }
    if (s.ok()) {
      names_.Removed(src_bucket, src_dir_key, name);
    } else {
      names_.Drop(src_bucket, src_dir_key, name);  // the old key may be in S3 still
      spdlog::error("background rename of s3://{}/{} to {} failed: {}", src_bucket, src_key,
                    dst_key, s.error().ToString());
    }
    local_.RemoveFile(dst_bucket, dst_key, h->writer.get());
    if (meta_) {
      meta_->Changed(src_bucket, src_key);
      meta_->Changed(dst_bucket, dst_key);
    }
    return s;
  };
  if (!pending_->Then(src.bucket, src.key, dst_dir.bucket, dst_key, std::move(move))) {
    return std::nullopt;
  }
  h->moved = true;
  local_.MoveFile(src.bucket, src.key, dst_dir.bucket, dst_key);
  names_.Removed(src.bucket, src_dir.key, name);
  return Status::Ok();
}

}  // namespace bucketfs::fs
