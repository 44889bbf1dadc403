// StagedUpload: commit and abort (see staged_upload.h).
#include <algorithm>

#include "base/mutex.h"
#include "s3/s3_limits.h"
#include "upload/staged_upload.h"

namespace bucketfs::upload {

Result<CommittedObject> StagedUpload::CommitLocked() {
  if (!staging_) return MakeError(EIO, "NoStaging", "no staging file for " + key_);
  if (auto e = StickyError()) {
    AbortLocked();
    return *e;
  }
  const uint64_t total = size_.load();
  if (base_ && !modified_) return CommittedObject{base_->etag, total};  // unchanged
  if (total <= layout_.End(0)) {
    AbortLocked();  // an upload started before a truncate is not needed
    return PutWhole(total);
  }
  const int n = layout_.Count(total);
  if (Status s = EnsureUpload(n); !s.ok()) return Abandon(s.error());
  if (Status s = PrepareUntouched(n); !s.ok()) return Abandon(s.error());
  // From here on no part is read from the staging file unless it is pending
  // now: a part sent before goes again only when a write changes it (none
  // can come) or its upload fails (that fails the commit). So staging writes
  // not yet done are dropped, and the one under way is not waited for:
  // close() waits for the upload, not for the disk.
  staging_->Cut();
  if (Status s = SendEveryPart(n); !s.ok()) return Abandon(s.error());
  Result<std::vector<s3::CompletedPart>> parts = std::vector<s3::CompletedPart>();
  {
    MutexLock done(done_mu_);
    // A staging write that failed before the cut may end only now.
    parts = parts_.first_error() ? Result<std::vector<s3::CompletedPart>>(*parts_.first_error())
                                 : parts_.Completed(n, key_);
  }
  if (!parts.ok()) return Abandon(parts.error());
  auto etag = upload_.Complete(std::move(*parts));
  if (!etag.ok()) return Abandon(etag.error());
  return CommittedObject{*etag, total};
}

// Every part below `n` that no write touched is copied from the base, or
// staged from it and sent. A store that copies without the CRC32C the
// upload needs makes it start over once, with MD5 (copies into the old
// upload are gone with it).
Status StagedUpload::PrepareUntouched(int n) {
  Status s = CopyOrStageUntouched(n);
  if (s.ok() || !MultipartUpload::IsCopyUnsummed(s.error())) return s;
  if (Status r = RestartWithMd5(n); !r.ok()) return r;
  return CopyOrStageUntouched(n);
}

Status StagedUpload::CopyOrStageUntouched(int n) {
  for (int i = 0; i < n; ++i) {
    if (!Untouched(i)) continue;
    if (CanCopy(i, n) && upload_.copies_supported()) {
      Status s = CopyPart(i);
      if (s.ok()) continue;
      if (!MultipartUpload::IsCopyUnsupported(s.error())) return s;
      upload_.NoteCopiesUnsupported();
    }
    // Untouched but not copyable (a short base tail, or a hole): stage it.
    if (Status s = Materialize(i); !s.ok()) return s;
    MutexLock done(done_mu_);
    parts_.Touch(i);
  }
  return Status::Ok();
}

// A part changed while on the wire comes back to the pending set when that
// upload ends: pumps until every part below `n` is clean or one failed.
Status StagedUpload::SendEveryPart(int n) {
  for (;;) {
    if (Status s = Pump(true, n); !s.ok()) return s;
    WaitForUploads();
    MutexLock done(done_mu_);
    if (parts_.first_error()) return *parts_.first_error();
    if (parts_.CleanBelow(n)) return Status::Ok();
  }
}

Result<CommittedObject> StagedUpload::PutWhole(uint64_t total) {
  if (Status s = Materialize(0); !s.ok()) return s.error();
  memory::PartBuffer body;
  if (fills_.Has(0)) {  // a small file that started with a large write
    body = fills_.Take(0, total).body;
  } else {
    body = ctx_.budget->Take(total);
    if (Status s = staging_->file().Read(0, body.bytes()); !s.ok()) {
      ctx_.budget->Give(std::move(body));
      return s.error();
    }
  }
  // The whole object in one body: it replaces whatever parts sent before
  // (an upload dropped by a truncate) put in the cache.
  if (cache_fill_) cache_fill_->Part(0, UINT64_MAX, 0, body.bytes());
  auto etag = upload_.Put(body.bytes(), ctx_.writer.checksum);
  ctx_.budget->Give(std::move(body));
  if (!etag.ok()) return etag.error();
  return CommittedObject{*etag, total};
}

// Creates the multipart upload if there is none yet, for an object of `n`
// parts as far as the writer knows (see UploadChecksum).
Status StagedUpload::EnsureUpload(int n) {
  if (upload_.started()) return Status::Ok();
  return upload_.Create(UploadChecksum(n));
}

// The checksum of a new upload for an object of `n` parts: the configured
// one, except MD5 when a CRC32C upload could not complete: the store reports
// no CRC32C for copied parts (this writer or the mount saw it) and a part
// below `n` would be copied from the base.
s3::BodyChecksum StagedUpload::UploadChecksum(int n) {
  const s3::BodyChecksum configured = ctx_.writer.checksum;
  if (configured != s3::BodyChecksum::kCrc32c || !base_ || !upload_.CopiesUnsummed()) {
    return configured;
  }
  for (int i = 0; i < n; ++i) {
    if (Untouched(i) && CanCopy(i, n)) return s3::BodyChecksum::kMd5;
  }
  return configured;
}

// The store copied a part into this CRC32C upload without reporting the
// part's CRC32C, which Complete must repeat: aborts the upload and starts an
// MD5 one for the `n` parts; every part sent so far (its bytes are in the
// staging file) goes again.
Status StagedUpload::RestartWithMd5(int n) {
  upload_.NoteCopiesUnsummed();
  AbortLocked();  // waits for the parts in flight and their staging writes
  {
    MutexLock done(done_mu_);
    parts_.ForgetUploads();
  }
  return EnsureUpload(n);
}

// Part `i` of an object with `n` parts may be copied from the base when it is
// untouched and its range is valid for UploadPartCopy.
bool StagedUpload::CanCopy(int i, int n) const {
  if (!base_) return false;
  const uint64_t start = layout_.Start(i);
  const uint64_t end = std::min(layout_.End(i), size_.load());
  if (end > base_->size) return false;
  return i == n - 1 || (end == layout_.End(i) && end - start >= s3::kMinPartSize);
}

Status StagedUpload::CopyPart(int i) {
  const uint64_t start = layout_.Start(i);
  auto r =
      upload_.CopyPart(i + 1, start, std::min(layout_.End(i), size_.load()) - start, base_->etag);
  if (!r.ok()) return r.error();
  MutexLock done(done_mu_);
  parts_.Copied(i, *r);
  return Status::Ok();
}

Error StagedUpload::Abandon(const Error& e) {
  AbortLocked();
  return e;
}

void StagedUpload::AbortLocked() {
  WaitForAllParts();
  upload_.Abort();
}

// Drops the staging file: its space counts as free at once, and its last
// close (freeing a large file's blocks can wait on the disk) runs on the
// closer, apart from the runner that sends other files' parts.
void StagedUpload::ReleaseStaging() {
  if (!staging_) return;
  base::TaskRunner* closer = ctx_.closer ? ctx_.closer.get() : ctx_.runner.get();
  StagingStore::Release(std::move(staging_), closer);
}

}  // namespace bucketfs::upload
