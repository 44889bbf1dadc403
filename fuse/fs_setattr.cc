// Filesystem: setattr. Size changes of files being written or emptied;
// mode, owner and mtime stored in user metadata with --preserve-attrs.
#include <spdlog/spdlog.h>

#include <optional>
#include <utility>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"
#include "fuse/object_type.h"
#include "s3/s3_limits.h"

namespace bucketfs::fs {

Result<struct stat> Filesystem::SetAttr(Ino ino, const SetAttrRequest& request) {
  auto in = inodes_.Get(ino);
  if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  if (config_.read_only) return MakeError(EROFS, "ReadOnly", "read-only mount");
  if (request.size && *request.size > s3::kMaxObjectSize) {
    return FileTooLarge(in->key, *request.size);
  }
  if (request.size && in->kind == Kind::kFile) {
    auto local = local_.FileAttrs(in->bucket, in->key);
    std::shared_ptr<FileWriter> writer;
    if (local) {
      writer = OpenWriter(in->bucket, in->key);
      if (!writer) {
        // Its last handle was released (a close just before this truncate):
        // once its upload has ended, the object is what to resize.
        WaitForReleasedUpload(in->bucket, in->key);
        local = local_.FileAttrs(in->bucket, in->key);
        if (local) writer = OpenWriter(in->bucket, in->key);
      }
    }
    if (local) {
      // A file being written: its writer resizes it (ENOTSUP if it cannot).
      if (*request.size != local->size) {
        if (!writer)
          return MakeError(ENOTSUP, "Truncate", "cannot resize a file while it is written");
        if (Status s = writer->Truncate(*request.size); !s.ok()) return s.error();
      }
    } else {
      in = inodes_.Get(ino);  // as in GetAttr: a commit may have ended since the first look
      if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
      auto attrs = HeadFresh(*in);
      if (!attrs.ok()) return attrs.error();
      if (*request.size != attrs->size) {
        if (!config_.allow_overwrite) {
          return MakeError(EPERM, "Truncate",
                           "existing objects can only be resized with allow_overwrite");
        }
        auto resized = ResizeObject(*in, *attrs, *request.size);
        if (!resized.ok()) return resized.error();
      }
    }
  }
  // Without --preserve-attrs (and for directories, which have no object) mode,
  // owner and times come from the mount options: accepted, not stored.
  if (config_.preserve_attrs && in->kind == Kind::kFile &&
      (request.mode || request.uid || request.gid || request.mtime)) {
    ObjectAttrs changed;
    if (request.mode) changed.mode = request.mode_value & 07777;
    if (request.uid) changed.uid = request.uid_value;
    if (request.gid) changed.gid = request.gid_value;
    if (request.mtime) changed.meta_mtime = request.mtime_value;
    // A file being written stores them once its upload is complete
    // (CommitHandle). If its last handle was just released, the upload is
    // ending: once it has, the object is what to change.
    for (int attempt = 0;; ++attempt) {
      if (!local_.FileAttrs(in->bucket, in->key)) {
        auto stored = StoreAttrs(ino, in->bucket, in->key, changed);
        if (!stored.ok()) return stored.error();
        return MakeStat(ino, Kind::kFile, *stored);
      }
      if (PendAttrs(in->bucket, in->key, changed)) break;
      if (attempt == 2) {
        return MakeError(EAGAIN, "Closing", "the file's upload is still ending: " + in->key);
      }
      WaitForReleasedUpload(in->bucket, in->key);
    }
  }
  return GetAttr(ino);
}

namespace {

// `changed` laid over `attrs`: the fields it sets win.
ObjectAttrs Overlaid(ObjectAttrs attrs, const ObjectAttrs& changed) {
  if (changed.mode) attrs.mode = changed.mode;
  if (changed.uid) attrs.uid = changed.uid;
  if (changed.gid) attrs.gid = changed.gid;
  if (changed.meta_mtime) attrs.meta_mtime = changed.meta_mtime;
  return attrs;
}

}  // namespace

Filesystem::FileHandle* Filesystem::WritingHandleLocked(const std::string& bucket,
                                                        const std::string& key) const {
  for (const auto& [fh, h] : files_) {
    if (h->writer && h->bucket == bucket && h->key == key) return h.get();
  }
  return nullptr;
}

void Filesystem::WaitForReleasedUpload(const std::string& bucket, const std::string& key) {
  WaitForUpload(bucket, key);  // --async-close: in the background
  if (auto ending = local_.Writer(bucket, key)) WaitUntilEnded(*ending);  // in the release
}

std::shared_ptr<FileWriter> Filesystem::OpenWriter(const std::string& bucket,
                                                   const std::string& key) const {
  MutexLock lock(handles_mu_);
  const FileHandle* h = WritingHandleLocked(bucket, key);
  return h ? h->writer : nullptr;
}

bool Filesystem::PendAttrs(const std::string& bucket, const std::string& key,
                           const ObjectAttrs& changed) {
  // Under handles_mu_, so that a release cannot drop the handle between the
  // choice and the change (it passes them on: PassPendingAttrsLocked).
  MutexLock lock(handles_mu_);
  FileHandle* h = WritingHandleLocked(bucket, key);
  if (!h) return false;
  MutexLock publish(h->publish_mu);
  if (h->published) return false;  // its commit has taken them already
  h->pending_attrs = Overlaid(h->pending_attrs.value_or(ObjectAttrs{}), changed);
  return true;
}

void Filesystem::PassPendingAttrsLocked(FileHandle& released) {
  std::optional<ObjectAttrs> pending;
  {
    MutexLock publish(released.publish_mu);
    pending = std::exchange(released.pending_attrs, std::nullopt);
  }
  if (!pending) return;
  FileHandle* next = OtherHandleOfLocked(*released.writer, &released);
  if (!next) return;
  MutexLock publish(next->publish_mu);
  next->pending_attrs = Overlaid(next->pending_attrs.value_or(ObjectAttrs{}), *pending);
}

Result<ObjectAttrs> Filesystem::StoreAttrs(Ino ino, const std::string& bucket,
                                           const std::string& key, const ObjectAttrs& changed) {
  // A fresh HEAD: the copy must keep the metadata it does not change.
  s3::HeadObjectParams hp;
  hp.bucket = bucket;
  hp.key = key;
  const auto asked = std::chrono::steady_clock::now();
  auto head = client_->HeadObject(hp);
  if (!head.ok()) return head.error();
  if (head->size > s3::kMaxCopyObjectSize) {
    return MakeError(ENOTSUP, "TooLarge",
                     "attributes of objects over 5 GiB cannot be changed in place: " + key);
  }
  ObjectAttrs attrs = FromHead(*head, asked);
  const uint32_t type = TypeBits(attrs);
  if (changed.mode) attrs.mode = type | (*changed.mode & 07777);
  if (changed.uid) attrs.uid = changed.uid;
  if (changed.gid) attrs.gid = changed.gid;
  if (changed.meta_mtime) attrs.meta_mtime = changed.meta_mtime;
  if (!attrs.mode) attrs.mode = type | (config_.file_mode & 07777);  // s3fs needs one
  s3::UserMetadata metadata = head->metadata;
  WritePosixMetadata(attrs, metadata);
  s3::CopyObjectParams p;
  p.bucket = p.source_bucket = bucket;
  p.key = p.source_key = key;
  p.source_if_match = head->etag;
  p.replace_metadata = std::move(metadata);
  auto r = client_->CopyObject(p);
  if (!r.ok()) {
    spdlog::warn("CopyObject (attributes) s3://{}/{}: {}", bucket, key, r.error().ToString());
    return r.error();
  }
  attrs.etag = r->etag;
  attrs.mtime = std::chrono::system_clock::now();
  attrs.fetched = std::chrono::steady_clock::now();
  inodes_.SetAttrs(ino, attrs);
  const auto [dir_key, name] = cache::SplitParent(key);
  names_.Wrote(bucket, dir_key, name, attrs);
  if (meta_) meta_->Changed(bucket, key);
  return attrs;
}

}  // namespace bucketfs::fs
