// StagedUpload: the write path (see staged_upload.h). Sending parts:
// staged_upload_parts.cc; commit and abort: staged_upload_commit.cc.
#include "upload/staged_upload.h"

#include <algorithm>

#include "base/mutex.h"

namespace bucketfs::upload {

Result<std::unique_ptr<StagedUpload>> StagedUpload::Open(const StagingContext& context,
                                                         const std::string& bucket,
                                                         const std::string& key,
                                                         std::optional<BaseObject> base) {
  auto staging =
      cache::StagingFile::Create(context.staging.dir, context.staging.ops, context.space);
  if (!staging.ok()) return staging.error();
  return std::make_unique<StagedUpload>(context, bucket, key, std::move(*staging), std::move(base));
}

StagedUpload::StagedUpload(const StagingContext& context, std::string bucket, std::string key,
                           std::unique_ptr<cache::StagingFile> staging,
                           std::optional<BaseObject> base)
    : ctx_(context),
      layout_(context.writer.part_size),
      bucket_(std::move(bucket)),
      key_(std::move(key)),
      staging_(std::make_shared<StagingStore>(std::move(staging))),
      base_(std::move(base)),
      upload_(context.client, bucket_, key_, context.copies_unsummed),
      fills_(context.budget, context.writer.checksum == s3::BodyChecksum::kCrc32c) {
  if (base_) size_.store(base_->size);
  if (ctx_.data_cache) cache_fill_ = std::make_shared<cache::WriteFill>(ctx_.data_cache);
}

StagedUpload::~StagedUpload() {
  MutexLock lock(mu_);
  if (staging_) staging_->Cut();  // nothing reads it again
  if (!committed_) AbortLocked();
  WaitForAllParts();  // completions must not outlive this object
  fills_.Release();
}

Status StagedUpload::Write(uint64_t offset, std::span<const std::byte> data) {
  MutexLock lock(mu_);
  if (Status s = CheckWritable(); !s.ok()) return s;
  if (data.empty()) return Status::Ok();
  const uint64_t end = offset + data.size();
  const int first = layout_.IndexOf(offset), last = layout_.IndexOf(end - 1);
  for (int i = first; i <= last; ++i) {
    const uint64_t lo = std::max(offset, layout_.Start(i));
    const uint64_t hi = std::min(end, layout_.End(i));
    if (ExtendsPrefix(i, lo, hi)) continue;
    if (Status s = Materialize(i); !s.ok()) return Fail(s.error());
  }
  // The space limit's ENOSPC for the whole write before any of it lands.
  if (Status s = staging_->Reserve(end); !s.ok()) return Fail(s.error());
  for (int i = first; i <= last; ++i) {
    const uint64_t lo = std::max(offset, layout_.Start(i));
    const uint64_t hi = std::min(end, layout_.End(i));
    if (Status s = WritePart(i, lo, data.subspan(lo - offset, hi - lo)); !s.ok()) {
      return Fail(s.error());
    }
  }
  modified_ = true;
  {
    MutexLock done(done_mu_);
    for (int i = first; i <= last; ++i) parts_.Touch(i);
  }
  if (end > size_.load()) size_.store(end, std::memory_order_release);
  cursor_ = end;
  return Pump(false);
}

Status StagedUpload::Truncate(uint64_t new_size) {
  MutexLock lock(mu_);
  if (Status s = CheckWritable(); !s.ok()) return s;
  const uint64_t old_size = size_.load();
  if (new_size == old_size) return Status::Ok();
  // The part holding the new end changes (cut or zero-extended); so does
  // every part between the old and the new end.
  const uint64_t lo = std::min(old_size, new_size);
  const uint64_t hi = std::max(old_size, new_size);
  const int first = layout_.IndexOf(lo), last = layout_.IndexOf(hi == 0 ? 0 : hi - 1);
  // Cutting into a part no write touched keeps it as the base's bytes, to
  // be copied server side up to the new end (the object's last part).
  const bool keep_first = new_size < old_size && base_ && Untouched(first);
  if (lo < hi && !keep_first) {
    if (Status s = Materialize(first); !s.ok()) return Fail(s.error());
  }
  // Rare (ftruncate while writing): parts filled in memory go to the
  // staging file first, so the cut and zero-extension happen in one place.
  // A staging write still under way could land past the new end.
  if (Status s = fills_.Spill(staging_->file(), layout_); !s.ok()) return Fail(s.error());
  WaitForStagingWrites();
  if (Status s = staging_->Truncate(new_size); !s.ok()) return Fail(s.error());
  if (base_ && base_->size > new_size) base_->size = new_size;  // base bytes past the end are gone
  modified_ = true;
  {
    MutexLock done(done_mu_);
    for (int i = keep_first ? first + 1 : first; i <= last; ++i) {
      parts_.Touch(i);
      parts_.Materialize(i, layout_.Start(i));  // its bytes are all in the staging file
    }
  }
  size_.store(new_size, std::memory_order_release);
  return Status::Ok();
}

Result<CommittedObject> StagedUpload::Commit() {
  MutexLock lock(mu_);
  if (!committed_) {
    committed_ = CommitLocked();
    WaitForUploads();  // staging writes under way end on their own (the destructor waits)
    if (cache_fill_ && committed_->ok() && modified_) {
      cache_fill_->Publish(
          s3::ObjectVersion{bucket_, key_, (*committed_)->etag, (*committed_)->size});
    }
    cache_fill_.reset();
    fills_.Release();
    ReleaseStaging();  // frees the disk space now, not when the handle goes
  }
  return *committed_;
}

void StagedUpload::Abort() {
  MutexLock lock(mu_);
  if (committed_) return;
  staging_->Cut();  // nothing reads it again
  AbortLocked();
  fills_.Release();
  committed_ = Result<CommittedObject>(MakeError(ECANCELED, "Aborted", "upload aborted"));
  ReleaseStaging();
}

Status StagedUpload::CheckWritable() {
  if (committed_) return MakeError(EBADF, "Committed", "file already flushed to " + key_);
  if (!staging_) return MakeError(EIO, "NoStaging", "no staging file for " + key_);
  if (auto e = StickyError()) return *e;
  return Status::Ok();
}

Status StagedUpload::Fail(const Error& e) {
  MutexLock done(done_mu_);
  parts_.Fail(e);
  return e;
}

std::optional<Error> StagedUpload::StickyError() {
  MutexLock done(done_mu_);
  return parts_.first_error();
}

// Writes `data` (inside part `i`) at `at`: into the part's fill buffer when
// it is filled in memory (or may start to be), else into the staging file.
Status StagedUpload::WritePart(int i, uint64_t at, std::span<const std::byte> data) {
  bool filled = fills_.Has(i);
  if (!filled && CanFill(i, at, data.size())) filled = fills_.Start(i, layout_.SizeOf(i));
  if (!filled) {
    WaitStaged(i);  // its bytes must be in the file before these land
    return staging_->Write(at, data);
  }
  fills_.Write(i, at - layout_.Start(i), data);
  return Status::Ok();
}

// Part `i` may be filled in memory from a write of `n` bytes at `at`: a part
// never written before, with no base bytes in it or written from its start
// (the in-order run that replaces them: a rewrite of an old file). A write
// that leaves the run, or sending the part before the run covers its base
// bytes, spills it to the staging file first (Materialize). The first part
// only when the file starts with a large write (dd, cp, fio, a stream):
// small files and formats that start with a small header they come back to
// (zip: torch.save, numpy.savez) keep it in the staging file.
bool StagedUpload::CanFill(int i, uint64_t at, uint64_t n) {
  constexpr uint64_t kFirstPartFillMin = 128 << 10;
  if (!ctx_.staging.fill_in_memory || fills_.Full()) return false;
  if (i == 0 && (at != 0 || n < kFirstPartFillMin)) return false;
  if (base_ && layout_.Start(i) < base_->size && at != layout_.Start(i)) return false;
  return Untouched(i);
}

bool StagedUpload::Untouched(int i) {
  MutexLock done(done_mu_);
  return parts_.Untouched(i);
}

// Waits until part `i`'s fill buffer is in the staging file.
void StagedUpload::WaitStaged(int i) {
  MutexLock done(done_mu_);
  while (!(!parts_.StagingPending(i))) cv_.Wait(done_mu_);
}

// The end of the base object's bytes in part `i` (its start: none).
uint64_t StagedUpload::BaseEnd(int i) const {
  const uint64_t start = layout_.Start(i);
  if (!base_ || start >= base_->size) return start;
  return std::min(layout_.End(i), base_->size);
}

bool StagedUpload::ExtendsPrefix(int i, uint64_t lo, uint64_t hi) {
  MutexLock done(done_mu_);
  return parts_.ExtendsPrefix(i, layout_.Start(i), lo, hi, BaseEnd(i));
}

// Brings the base object's bytes of part `i` that its in-order run from the
// start has not overwritten into the staging file: before a write that
// leaves that run, and before the part is sent. A part filled in memory (the
// run so far) goes to the staging file first.
Status StagedUpload::Materialize(int i) {
  std::optional<uint64_t> start;
  {
    MutexLock done(done_mu_);
    start = parts_.Materialize(i, layout_.Start(i));
  }
  if (!start) return Status::Ok();
  if (fills_.Has(i)) {
    if (Status s = fills_.SpillPart(i, staging_->file(), layout_); !s.ok()) return s;
  }
  if (*start >= BaseEnd(i)) return Status::Ok();
  memory::PartBuffer buf = ctx_.budget->Take(BaseEnd(i) - *start);
  Status s = upload_.ReadBase(*start, buf.bytes(), base_->etag);
  if (s.ok()) s = staging_->Write(*start, buf.bytes());
  ctx_.budget->Give(std::move(buf));
  return s;
}

}  // namespace bucketfs::upload
