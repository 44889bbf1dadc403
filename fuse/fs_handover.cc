// Filesystem: the journal of handles, and taking a mount over from a
// previous daemon (see filesystem.h, handover/session_journal.h).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"

namespace bucketfs::fs {

void Filesystem::JournalOpen(uint64_t fh, Ino ino, handover::HandleKind kind, uint64_t size,
                             const std::string& etag) {
  if (journal_) journal_->HandleOpened({fh, ino, kind, size, etag});
}

void Filesystem::JournalClose(uint64_t fh) {
  if (journal_) journal_->HandleClosed(fh);
}

void Filesystem::Restore(const handover::SessionState& state) {
  inodes_.Restore(state.nodes);
  size_t reads = 0, lost = 0, dirs = 0, stale = 0;
  MutexLock lock(handles_mu_);
  for (const auto& [fh, record] : state.handles) {
    next_fh_ = std::max(next_fh_, fh + 1);
    auto in = inodes_.Get(record.ino);
    if (!in) {
      ++stale;  // its inode was not recorded: requests through it get EBADF
      continue;
    }
    if (record.kind == handover::HandleKind::kDir) {
      dirs_.emplace(
          fh, std::make_shared<DirHandle>(record.ino, in->bucket, in->key, IsBucketList(*in)));
      ++dirs;
      continue;
    }
    auto h = std::make_shared<FileHandle>();
    h->ino = record.ino;
    h->bucket = in->bucket;
    h->key = in->key;
    if (record.kind == handover::HandleKind::kWrite) {
      h->lost = true;
      ++lost;
    } else {
      // The version the open pinned: a changed object fails the read
      // instead of mixing two versions.
      h->reader = readers_->Open({in->bucket, in->key, record.etag, record.size});
      h->etag = record.etag;  // an unlink while it is open keeps this version
      ++reads;
    }
    files_.emplace(fh, std::move(h));
  }
  spdlog::info(
      "took the mount over: {} inodes, {} read handles, {} directory handles, {} handles that "
      "were writing (their writes now fail with EIO){}",
      state.nodes.size(), reads, dirs, lost,
      stale == 0 ? "" : fmt::format(", {} handles without an inode", stale));
}

Status Filesystem::PrepareHandover() {
  Status first;
  if (pending_) first = pending_->WaitAll();
  std::vector<std::shared_ptr<FileHandle>> writing;
  {
    MutexLock lock(handles_mu_);
    for (auto& [fh, h] : files_) {
      if (h->writer) writing.push_back(h);
    }
  }
  for (auto& h : writing) {
    h->writer->Abort();
    local_.RemoveFile(h->bucket, h->key, h->writer.get());
    spdlog::warn("s3://{}/{} is open for writing: its upload is abandoned at the restart",
                 h->bucket, h->key);
  }
  readers_->Quiesce();
  return first;
}

}  // namespace bucketfs::fs
