// Filesystem: unlink, with the local rule for open files: the name goes at
// once, the object when the last handle that had it open is closed.
//
// S3 holds one object per key and no link count, so "open but unlinked" is
// kept here: read handles keep the object they pinned (its ETag) in S3 until
// the last of them closes, while lookups and listings of this mount no longer
// show the name; a file being written gets no new version (its upload is
// abandoned at the last close), and what its fsyncs made (or the object it
// was opened over) goes at the last close too. A crash in between leaves the object in S3:
// data is never lost by accident, only kept too long.
#include <spdlog/spdlog.h>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"

namespace bucketfs::fs {

Status Filesystem::Unlink(Ino parent, const std::string& name) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  if (Status s = CheckWritable(*dir, name); !s.ok()) return s;
  if (!config_.allow_delete) {
    return MakeError(EPERM, "DeleteNotAllowed", "mount with --allow-delete to delete objects");
  }
  const std::string key = dir->key + name;
  WaitForUpload(dir->bucket, key);
  const bool writing = local_.FileAttrs(dir->bucket, key).has_value();
  if (!writing && IsUnlinked(dir->bucket, key)) return MakeError(ENOENT, "NoSuchKey", key);
  bool kept = false;  // handles still read the object
  {
    MutexLock lock(handles_mu_);
    for (auto& [fh, h] : files_) {
      if (h->bucket != dir->bucket || h->key != key) continue;
      if (h->writer && writing && !h->abandoned.exchange(true)) {
        // Its upload is abandoned at the last close: no new version appears.
        local_.RemoveFile(h->bucket, h->key, h->writer.get());
      }
    }
    kept = KeepForOpenHandles(dir->bucket, key);
  }
  if (!kept) {
    Status s = client_->DeleteObject({dir->bucket, key});
    if (!s.ok()) {
      spdlog::warn("DeleteObject s3://{}/{}: {}", dir->bucket, key, s.error().ToString());
      return s;
    }
  }
  if (meta_) meta_->Changed(dir->bucket, key);
  names_.Removed(dir->bucket, dir->key, name);
  inodes_.Unlink(parent, name);
  return Status::Ok();
}

bool Filesystem::KeepForOpenHandles(const std::string& bucket, const std::string& key) {
  std::shared_ptr<UnlinkedObject> kept;
  for (auto& [fh, h] : files_) {
    if (h->bucket != bucket || h->key != key) continue;
    const FileWriter* w = h->writer ? h->writer.get() : h->source.get();
    if ((h->reader || (w && w->ReadsObject())) && !h->unlinked) {
      // The object stays while the handle may read it (a writer reads the
      // version it builds on, or the one an fsync made): "" for whatever
      // version a writer left.
      if (!kept) kept = std::make_shared<UnlinkedObject>(UnlinkedObject{bucket, key});
      kept->etags.insert(h->reader ? h->etag : std::string());
      ++kept->open;
      h->unlinked = kept;
    }
  }
  if (!kept) return false;
  unlinked_[{bucket, key}] = kept;
  unlinked_count_.store(unlinked_.size(), std::memory_order_relaxed);
  return true;
}

bool Filesystem::IsUnlinked(const std::string& bucket, const std::string& key) const {
  if (unlinked_count_.load(std::memory_order_relaxed) == 0) return false;  // the usual case
  MutexLock lock(handles_mu_);
  return unlinked_.count({bucket, key}) != 0;
}

void Filesystem::ReplacedObject(const std::string& bucket, const std::string& key) {
  if (unlinked_count_.load(std::memory_order_relaxed) == 0) return;
  MutexLock lock(handles_mu_);
  auto it = unlinked_.find({bucket, key});
  if (it == unlinked_.end()) return;
  it->second->replaced = true;  // the new object must survive the old handles' close
  unlinked_.erase(it);
  unlinked_count_.store(unlinked_.size(), std::memory_order_relaxed);
}

void Filesystem::ReleaseUnlinked(FileHandle& h) {
  std::shared_ptr<UnlinkedObject> record;
  {
    MutexLock lock(handles_mu_);
    record = std::move(h.unlinked);
    if (!record || --record->open > 0 || record->replaced) return;
  }
  const auto forget = [&] {
    MutexLock lock(handles_mu_);
    auto it = unlinked_.find({record->bucket, record->key});
    if (it != unlinked_.end() && it->second == record) unlinked_.erase(it);
    unlinked_count_.store(unlinked_.size(), std::memory_order_relaxed);
  };
  // Only a version the handles read: an object another client wrote under
  // the key meanwhile stays.
  s3::HeadObjectParams hp;
  hp.bucket = record->bucket;
  hp.key = record->key;
  auto head = client_->HeadObject(hp);
  if (!head.ok()) {
    if (head.error().errno_value != ENOENT) {
      spdlog::warn("unlinked s3://{}/{} is kept: HeadObject: {}", hp.bucket, hp.key,
                   head.error().ToString());
    }
    return forget();
  }
  if (!record->etags.count(head->etag) && !record->etags.count("")) {
    spdlog::info("unlinked s3://{}/{} is kept: replaced by another client", hp.bucket, hp.key);
    return forget();
  }
  if (Status s = client_->DeleteObject({record->bucket, record->key}); !s.ok()) {
    spdlog::warn("unlinked s3://{}/{} is kept: DeleteObject: {}", hp.bucket, hp.key,
                 s.error().ToString());
  }
  if (meta_) meta_->Changed(record->bucket, record->key);
  forget();
}

}  // namespace bucketfs::fs
