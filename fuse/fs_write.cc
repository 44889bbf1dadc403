// Filesystem: create, write and flush (the upload's real result).
#include <spdlog/spdlog.h>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"
#include "s3/s3_limits.h"

namespace bucketfs::fs {
namespace {

Error LostWrites(const std::string& bucket, const std::string& key) {
  return MakeError(EIO, "Restarted",
                   "bucketfs restarted while s3://" + bucket + "/" + key +
                       " was open for writing: what was written through this descriptor was not "
                       "uploaded; write the file again");
}

}  // namespace

Result<std::pair<Entry, OpenedFile>> Filesystem::Create(Ino parent, const std::string& name,
                                                        int /*flags*/, pid_t pid) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  if (Status s = CheckWritable(*dir, name); !s.ok()) return s.error();
  const std::string key = dir->key + name;
  WaitForUpload(dir->bucket, key);
  if (local_.FileAttrs(dir->bucket, key)) {
    return MakeError(EBUSY, "Busy", key + " is being written");
  }
  auto h = std::make_shared<FileHandle>();
  h->bucket = dir->bucket;
  h->key = key;
  h->opener = pid;
  h->writer = writers_->Create(dir->bucket, key);
  local_.AddFile(dir->bucket, key, h->writer);
  if (meta_) meta_->Changed(dir->bucket, key);
  const ObjectAttrs attrs{0, std::chrono::system_clock::now(), "",
                          std::chrono::steady_clock::now()};
  h->ino = inodes_.Acquire(parent, name, Kind::kFile, dir->bucket, key, attrs);
  Entry entry = MakeEntry(h->ino, Kind::kFile, attrs);
  OpenedFile opened;
  {
    MutexLock lock(handles_mu_);
    opened.fh = next_fh_++;
    files_.emplace(opened.fh, std::move(h));
  }
  JournalOpen(opened.fh, entry.ino, handover::HandleKind::kWrite);
  return std::make_pair(entry, opened);
}

Result<size_t> Filesystem::Write(uint64_t fh, uint64_t offset, std::span<const std::byte> data) {
  auto h = GetFile(fh);
  if (!h) return MakeError(EBADF, "BadHandle", "unknown file handle");
  if (h->lost) return LostWrites(h->bucket, h->key);
  if (!h->writer) return MakeError(EBADF, "ReadOnly", "file is open for reading only");
  if (offset > s3::kMaxObjectSize || data.size() > s3::kMaxObjectSize - offset) {
    return FileTooLarge(h->key, offset + data.size());
  }
  h->written.store(true, std::memory_order_relaxed);
  Status s = h->writer->Write(offset, data);
  if (!s.ok()) {
    io_counters_.AddError();
    return s.error();
  }
  io_counters_.AddWritten(data.size());
  return data.size();
}

Status Filesystem::Flush(uint64_t fh, pid_t pid) {
  auto h = GetFile(fh);
  if (h && h->lost) return LostWrites(h->bucket, h->key);
  if (!h || !h->writer || h->abandoned) return Status::Ok();
  // Nothing written through this handle yet (a shell's `>`/`>>`: open, dup2,
  // close, then write), or a process other than the opener: release commits.
  if (!h->written.load(std::memory_order_relaxed) || (pid != 0 && pid != h->opener)) {
    return Status::Ok();
  }
  if (pending_ && !WriterShared(*h)) {  // --async-close: uploaded in the background from now on
    SubmitUpload(h);
    return Status::Ok();
  }
  // Every close makes what was written durable, but only the release ends
  // the upload: a dup of this descriptor (a shared map holds one) may still
  // write, and so may other handles of the file.
  return SyncHandle(*h);
}

Status Filesystem::Fsync(uint64_t fh) {
  auto h = GetFile(fh);
  if (h && h->lost) return LostWrites(h->bucket, h->key);
  if (!h || !h->writer || h->abandoned) return Status::Ok();  // unlinked: nothing to keep
  return SyncHandle(*h);
}

bool Filesystem::WriterShared(const FileHandle& handle) const {
  MutexLock lock(handles_mu_);
  return WriterSharedLocked(handle);
}

bool Filesystem::WriterSharedLocked(const FileHandle& handle) const {
  return handle.writer && OtherHandleOfLocked(*handle.writer, &handle) != nullptr;
}

Filesystem::FileHandle* Filesystem::OtherHandleOfLocked(const FileWriter& writer,
                                                        const FileHandle* except) const {
  for (const auto& [fh, h] : files_) {
    if (h.get() != except && h->writer.get() == &writer) return h.get();
  }
  return nullptr;
}

Status Filesystem::SyncHandle(FileHandle& h) {
  auto r = h.writer->Sync();
  if (!r.ok()) {
    io_counters_.AddError();
    return r.error();
  }
  if (h.abandoned) return Status::Ok();  // unlinked meanwhile: the last close drops it
  ReplacedObject(h.bucket, h.key);
  // The object now exists; the name stays local (its size is the writer's)
  // until the last handle ends the upload.
  ObjectAttrs attrs{r->size, std::chrono::system_clock::now(), r->etag,
                    std::chrono::steady_clock::now()};
  attrs.metadata_known = true;
  const auto [dir_key, name] = cache::SplitParent(h.key);
  names_.Wrote(h.bucket, dir_key, name, attrs);
  if (meta_) meta_->Changed(h.bucket, h.key);
  return Status::Ok();
}

Result<ObjectAttrs> Filesystem::ResizeObject(const InodeSnapshot& in, const ObjectAttrs& attrs,
                                             uint64_t size) {
  auto writer = writers_->CreateFrom(in.bucket, in.key, {attrs.etag, attrs.size});
  if (!writer) return MakeError(EPERM, "Truncate", "existing objects cannot be resized");
  if (Status s = writer->Truncate(size); !s.ok()) {
    writer->Abort();
    return s.error();
  }
  auto r = writer->Commit();
  if (!r.ok()) {
    spdlog::warn("truncate of s3://{}/{} to {} bytes: {}", in.bucket, in.key, size,
                 r.error().ToString());
    return r.error();
  }
  ReplacedObject(in.bucket, in.key);
  if (meta_) meta_->Changed(in.bucket, in.key);
  ObjectAttrs resized{r->size, std::chrono::system_clock::now(), r->etag,
                      std::chrono::steady_clock::now()};
  resized.metadata_known = true;
  inodes_.SetAttrs(in.ino, resized);
  const auto [dir_key, name] = cache::SplitParent(in.key);
  names_.Wrote(in.bucket, dir_key, name, resized);
  return resized;
}

}  // namespace bucketfs::fs
