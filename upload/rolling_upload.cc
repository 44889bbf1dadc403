// RollingUpload: see rolling_upload.h.
#include "upload/rolling_upload.h"

#include <algorithm>

#include "base/mutex.h"

namespace bucketfs::upload {

RollingUpload::RollingUpload(StagingContext context, std::string bucket, std::string key,
                             std::unique_ptr<StagedUpload> first, bool over_base)
    : ctx_(std::move(context)),
      bucket_(std::move(bucket)),
      key_(std::move(key)),
      over_base_(over_base),
      size_(first->size()),
      current_(std::move(first)) {}

RollingUpload::~RollingUpload() = default;

Status RollingUpload::Write(uint64_t offset, std::span<const std::byte> data) {
  MutexLock lock(mu_);
  auto current = Current();
  if (!current.ok()) return current.error();
  Status s = (*current)->Write(offset, data);
  size_.store((*current)->size(), std::memory_order_release);
  return s;
}

Status RollingUpload::Truncate(uint64_t size) {
  MutexLock lock(mu_);
  if (!current_ && last_ && last_->size == size && !ended_ && !error_) return Status::Ok();
  auto current = Current();
  if (!current.ok()) return current.error();
  Status s = (*current)->Truncate(size);
  size_.store((*current)->size(), std::memory_order_release);
  return s;
}

bool RollingUpload::ReadsObject() const {
  MutexLock lock(mu_);
  return over_base_ || last_.has_value();
}

Result<size_t> RollingUpload::Read(uint64_t offset, std::span<std::byte> dest) {
  MutexLock lock(mu_);
  if (current_) return current_->Read(offset, dest);
  if (last_) return ReadCommitted(offset, dest);
  if (error_) return *error_;
  return MakeError(EBADF, "Aborted", "upload of " + key_ + " was dropped");
}

Result<CommittedObject> RollingUpload::Sync() {
  MutexLock lock(mu_);
  if (ended_ && !error_ && !last_) {
    return MakeError(EBADF, "Aborted", "upload of " + key_ + " was dropped");
  }
  return SyncLocked();
}

Result<CommittedObject> RollingUpload::Commit() {
  MutexLock lock(mu_);
  if (ended_) {
    if (error_) return *error_;
    if (last_) return *last_;
    return MakeError(ECANCELED, "Aborted", "upload aborted");
  }
  auto r = SyncLocked();
  ended_ = true;
  return r;
}

void RollingUpload::Abort() {
  MutexLock lock(mu_);
  if (ended_) return;
  ended_ = true;
  if (current_) current_->Abort();
  current_.reset();
  last_.reset();  // nothing to read: the file is gone
}

Result<StagedUpload*> RollingUpload::Current() {
  if (error_) return *error_;
  if (ended_) return MakeError(EBADF, "Committed", "file already flushed to " + key_);
  if (!current_) {
    // The next version starts as the last one, which S3 now holds.
    auto next = StagedUpload::Open(ctx_, bucket_, key_, BaseObject{last_->etag, last_->size});
    if (!next.ok()) return next.error();
    current_ = std::move(*next);
  }
  return current_.get();
}

Result<CommittedObject> RollingUpload::SyncLocked() {
  if (error_) return *error_;
  if (!current_) return *last_;  // nothing written since the last version
  auto r = current_->Commit();
  current_.reset();  // its staging file and part buffers go now
  if (!r.ok()) {
    error_ = r.error();
    return r.error();
  }
  last_ = *r;
  size_.store(r->size, std::memory_order_release);
  return r;
}

Result<size_t> RollingUpload::ReadCommitted(uint64_t offset, std::span<std::byte> dest) {
  if (offset >= last_->size || dest.empty()) return size_t{0};
  const uint64_t n = std::min<uint64_t>(last_->size - offset, dest.size());
  s3::GetObjectParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.offset = offset;
  p.length = n;
  p.if_match = last_->etag;
  auto r = ctx_.client->GetObject(p, dest.first(n));
  if (!r.ok()) return r.error();
  return static_cast<size_t>(n);
}

}  // namespace bucketfs::upload
