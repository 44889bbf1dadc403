// Filesystem: open, read and release of files.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"

namespace bucketfs::fs {

// Files after an opened one, in listing order, handed to the read path.
constexpr size_t kHintedSiblings = 8;

Result<OpenedFile> Filesystem::Open(Ino ino, int flags, pid_t pid, bool want_local_copy) {
  // A writer joined at the first look may have been ended by its last
  // handle's release before the join: look again (twice at most).
  for (int attempt = 0;; ++attempt) {
    bool look_again = false;
    auto opened = OpenOnce(ino, flags, pid, want_local_copy, attempt < 2 ? &look_again : nullptr);
    if (!look_again) return opened;
  }
}

bool Filesystem::JoinWriter(const std::shared_ptr<FileHandle>& h, const FileWriter& writer,
                            uint64_t& fh) {
  MutexLock lock(handles_mu_);
  if (ending_.count(&writer) != 0) return false;
  if (!OtherHandleOfLocked(writer, nullptr)) return false;
  fh = next_fh_++;
  files_.emplace(fh, h);
  return true;
}

Result<OpenedFile> Filesystem::OpenOnce(Ino ino, int flags, pid_t pid, bool want_local_copy,
                                        bool* look_again) {
  auto in = inodes_.Get(ino);
  if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  if (in->kind == Kind::kDir) return MakeError(EISDIR, "IsADirectory", in->key);
  // The kernel follows links itself and never opens one; this is a guard.
  if (in->attrs.type == ObjectType::kLink) return MakeError(ELOOP, "SymbolicLink", in->key);
  if (pending_ && pending_->Pending(in->bucket, in->key)) {
    // A file closed but still uploading: its bytes are readable once in S3,
    // with the attributes the upload (or the copy of a rename) recorded.
    WaitForUpload(in->bucket, in->key);
    in = inodes_.Get(ino);
    if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  }
  auto h = std::make_shared<FileHandle>();
  h->ino = ino;
  h->bucket = in->bucket;
  h->key = in->key;
  h->opener = pid;
  std::shared_ptr<FileWriter> local_writer = local_.Writer(in->bucket, in->key);
  if (local_writer && (flags & O_ACCMODE) == O_RDONLY) {
    // If its last writer was released and is ending the upload, the object
    // is what this open reads once it has.
    WaitUntilEnded(*local_writer);
    if (auto now = local_.Writer(in->bucket, in->key); now != local_writer) {
      local_writer = std::move(now);
      in = inodes_.Get(ino);
      if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
    }
  }
  const bool writing = local_writer != nullptr;
  OpenedFile opened;
  // Joining a writer registers the handle at once (JoinWriter); a join that
  // comes too late is looked at again.
  bool registered = false;
  const auto join = [&]() -> Status {
    if (JoinWriter(h, *local_writer, opened.fh)) {
      registered = true;
      return Status::Ok();
    }
    WaitUntilEnded(*local_writer);
    if (look_again != nullptr) *look_again = true;
    return MakeError(EAGAIN, "WriterEnded",
                     "the upload of " + in->key + " ended while it was opened; try again");
  };
  handover::HandleRecord record{0, ino, handover::HandleKind::kRead, 0, ""};
  if ((flags & O_ACCMODE) != O_RDONLY) {
    record.kind = handover::HandleKind::kWrite;
    if (config_.read_only) return MakeError(EROFS, "ReadOnly", "read-only mount");
    if (!config_.allow_overwrite) {
      return MakeError(EPERM, "Overwrite",
                       "existing objects can only be changed with allow_overwrite");
    }
    if (writing) {
      // Another handle writes it: this one writes through the same writer.
      h->writer = local_writer;
      if (Status s = join(); !s.ok()) return s.error();
      if (flags & O_TRUNC) {
        if (Status s = h->writer->Truncate(0); !s.ok()) {
          Forget(opened.fh);
          return s.error();
        }
      }
    } else if (flags & O_TRUNC) {
      h->writer = writers_->Create(in->bucket, in->key);
    } else {
      // Append or in-place change: the writer starts from the object as it is
      // (writers that cannot, like the sequential one, return null).
      auto attrs = HeadFresh(*in);
      if (!attrs.ok()) return attrs.error();
      h->writer = writers_->CreateFrom(in->bucket, in->key, {attrs->etag, attrs->size});
      if (!h->writer) {
        return MakeError(EPERM, "Overwrite",
                         "existing objects can only be replaced with O_TRUNC and allow_overwrite");
      }
    }
    if (!writing) local_.AddFile(in->bucket, in->key, h->writer);
    if (meta_) meta_->Changed(in->bucket, in->key);
    opened.direct_io = true;
  } else if (writing) {
    // Being written by another handle: its bytes so far, from the writer.
    h->source = local_writer;
    if (Status s = join(); !s.ok()) return s.error();
    opened.direct_io = true;
  } else {
    auto attrs = HeadFresh(*in);
    if (!attrs.ok()) return attrs.error();
    const std::string previous = inodes_.ExchangeOpenEtag(ino, attrs->etag);
    opened.keep_cache = !attrs->etag.empty() && previous == attrs->etag;
    const ObjectVersion version{in->bucket, in->key, attrs->etag, attrs->size};
    bool in_order = false;
    {
      MutexLock lock(order_hint_mu_);  // see its declaration
      h->reader = readers_->Open(version);
      in_order = order_->Opened(in->bucket, in->key);
    }
    if (want_local_copy) opened.local_copy = readers_->VerifiedCopy(version);
    h->etag = attrs->etag;
    record.size = attrs->size;
    record.etag = attrs->etag;
    if (in_order) {
      AdvanceOrder();  // an announced order replaces the guess from the listing
    } else if (auto next = siblings_.AfterInOrder(in->parent, in->name, kHintedSiblings);
               !next.empty()) {
      readers_->HintNextFiles(next);
    }
  }
  if (!registered) {
    MutexLock lock(handles_mu_);
    opened.fh = next_fh_++;
    files_.emplace(opened.fh, std::move(h));
  }
  JournalOpen(opened.fh, ino, record.kind, record.size, record.etag);
  return opened;
}

void Filesystem::Forget(uint64_t fh) {
  std::shared_ptr<FileHandle> h;  // released outside the lock
  MutexLock lock(handles_mu_);
  auto it = files_.find(fh);
  if (it == files_.end()) return;
  h = std::move(it->second);
  files_.erase(it);
}

Result<size_t> Filesystem::Read(uint64_t fh, uint64_t offset, std::span<std::byte> dest) {
  auto h = GetFile(fh);
  if (!h) return MakeError(EBADF, "BadHandle", "unknown file handle");
  FileWriter* const from = h->writer ? h->writer.get() : h->source.get();
  if (!h->reader && !from) return MakeError(EBADF, "WriteOnly", "file is open for writing only");
  auto n = h->reader ? h->reader->Read(offset, dest) : from->Read(offset, dest);
  if (n.ok()) {
    io_counters_.AddRead(*n);
  } else {
    io_counters_.AddError();
  }
  return n;
}

void Filesystem::ServeRead(uint64_t fh, uint64_t offset, size_t size, ReadDone done) {
  auto h = GetFile(fh);
  if (h && !h->reader && (h->writer || h->source)) {
    // A file being written: read from its writer's state, on this thread.
    std::vector<std::byte> buf(size);
    auto n = Read(fh, offset, buf);
    if (!n.ok()) return done(&n.error(), {});
    const std::span<const std::byte> segment(buf.data(), *n);
    return done(nullptr, std::span(&segment, 1));
  }
  if (!h || !h->reader) {
    const Error e = MakeError(EBADF, "BadHandle", "file is not open for reading");
    return done(&e, {});
  }
  // The handle stays alive until the read completes.
  h->reader->ReadSegments(
      offset, size,
      [this, h, done = std::move(done)](const Error* error,
                                        std::span<const std::span<const std::byte>> data) {
        if (error != nullptr) {
          io_counters_.AddError();
        } else {
          uint64_t bytes = 0;
          for (const auto& segment : data) bytes += segment.size();
          io_counters_.AddRead(bytes);
        }
        done(error, data);
      });
}

Status Filesystem::CommitHandle(FileHandle& h) {
  if (h.abandoned) {
    h.writer->Abort();
    return Status::Ok();
  }
  auto r = h.writer->Commit();
  if (r.ok() && h.abandoned) {  // unlinked while its upload completed: it goes too
    Status s = client_->DeleteObject({h.bucket, h.key});
    if (!s.ok()) {
      spdlog::warn("DeleteObject (unlinked while uploaded) s3://{}/{}: {}", h.bucket, h.key,
                   s.error().ToString());
    }
    return Status::Ok();
  }
  if (r.ok()) ReplacedObject(h.bucket, h.key);  // what an unlinked name held is overwritten
  // The name's new state is recorded before it stops being local, so no
  // lookup in between sees an older answer.
  const auto [dir_key, name] = cache::SplitParent(h.key);
  std::optional<ObjectAttrs> attrs;
  if (r.ok()) {
    attrs = ObjectAttrs{r->size, std::chrono::system_clock::now(), r->etag,
                        std::chrono::steady_clock::now()};
    attrs->metadata_known = true;  // written without any
  }
  {
    MutexLock lock(h.publish_mu);
    if (!r.ok() && !h.published) io_counters_.AddError();  // once per file, not per close
    // A second commit (release after flush) returns the first one's result:
    // published already, and maybe changed since (--preserve-attrs).
    const bool again = h.published;
    h.published = true;
    h.committed = attrs;
    if (!h.moved && !again) {  // else the rename's chained step publishes the new name
      if (attrs) {
        names_.Wrote(h.bucket, dir_key, name, *attrs);
      } else {
        names_.Drop(h.bucket, dir_key, name);  // the old object, if any, may remain
      }
      if (attrs) inodes_.SetAttrs(h.ino, *attrs);
      local_.RemoveFile(h.bucket, h.key, h.writer.get());
    }
  }
  if (meta_) meta_->Changed(h.bucket, h.key);  // committed (or not): ask S3 next time
  if (!r.ok()) return r.error();
  std::optional<ObjectAttrs> pending;
  {
    MutexLock lock(h.publish_mu);
    pending = std::exchange(h.pending_attrs, std::nullopt);
    if (h.moved) pending.reset();  // renamed meanwhile: set on the new name after its copy
  }
  if (pending) {
    auto stored = StoreAttrs(h.ino, h.bucket, h.key, *pending);
    if (!stored.ok()) return stored.error();
  }
  return Status::Ok();
}

void Filesystem::SubmitUpload(const std::shared_ptr<FileHandle>& h) {
  if (h->submitted.exchange(true)) return;
  {
    MutexLock lock(handles_mu_);
    uploading_[{h->bucket, h->key}] = h;
  }
  // The file stays listed as being written until its upload ends.
  pending_->Submit(h->bucket, h->key, [this, h] {
    auto copy = KeepCopy(*h);
    Status s = CommitHandle(*h);
    if (!s.ok()) {
      spdlog::error("background upload of s3://{}/{} failed: {}", h->bucket, h->key,
                    s.error().ToString());
    }
    if (copy && s.ok()) kept_->Drop(*copy);
    if (copy && !s.ok()) kept_->Failed(*copy, s.error());
    MutexLock lock(handles_mu_);
    for (auto it = uploading_.begin(); it != uploading_.end();) {
      it = it->second == h ? uploading_.erase(it) : std::next(it);
    }
    return s;
  });
}

// The bytes of a file about to be uploaded in the background, copied aside
// first so that a failure does not lose them; none for a file being dropped.
std::optional<KeptUploads::Copy> Filesystem::KeepCopy(FileHandle& h) {
  if (h.abandoned) return std::nullopt;
  auto copy = kept_->Keep(
      h.bucket, h.key, h.writer->size(),
      [&h](uint64_t offset, std::span<std::byte> dest) { return h.writer->Read(offset, dest); });
  if (!copy.ok()) {
    spdlog::warn("s3://{}/{} is uploaded without a local copy to keep if it fails: {}", h.bucket,
                 h.key, copy.error().ToString());
    return std::nullopt;
  }
  return *copy;
}

void Filesystem::Release(uint64_t fh) {
  JournalClose(fh);
  std::shared_ptr<FileHandle> h;
  bool shared = false;
  bool ends_upload = false;
  {
    MutexLock lock(handles_mu_);
    auto it = files_.find(fh);
    if (it == files_.end()) return;
    h = std::move(it->second);
    files_.erase(it);
    // Marked in the same step that drops the handle, so an open never finds
    // the file written by nobody and not ending either.
    shared = h->writer && WriterSharedLocked(*h);
    if (shared) PassPendingAttrsLocked(*h);  // else they would go with this handle
    ends_upload = h->writer && !shared && !pending_ && !h->abandoned;
    if (ends_upload) ending_.insert(h->writer.get());
  }
  ReleaseUnlinked(*h);
  if (!h->writer) return;
  Status s;
  if (shared) {
    // the last handle that writes ends the upload
  } else if (h->abandoned) {
    h->writer->Abort();  // unlinked while written: no object
  } else if (pending_) {
    SubmitUpload(h);
  } else {
    s = CommitHandle(*h);
  }
  if (ends_upload) {
    MutexLock lock(handles_mu_);
    ending_.erase(h->writer.get());
    ended_.NotifyAll();
  }
  if (!s.ok()) {
    spdlog::error("upload of s3://{}/{} failed at close: {}", h->bucket, h->key,
                  s.error().ToString());
  }
}

}  // namespace bucketfs::fs
