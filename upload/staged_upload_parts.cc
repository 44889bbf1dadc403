// StagedUpload: sending parts (see staged_upload.h). A part goes out from
// its fill buffer or read back from the staging file, on the runner; a part
// filled in memory is written to the staging file meanwhile, on the stager.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/mutex.h"
#include "s3/crc32c.h"
#include "upload/staged_upload.h"

namespace bucketfs::upload {

bool StagedUpload::Eligible(int i, uint64_t cursor) const {
  const uint64_t end = layout_.End(i);
  return end <= size_.load() && end + ctx_.staging.settle_bytes <= cursor;
}

// Starts uploads of pending parts: while writing, the final ones (waiting for
// a slot only when more than a window of them is queued); at commit (`all`),
// every pending part below `limit`, waiting for slots.
Status StagedUpload::Pump(bool all, int limit) {
  const int window = std::max(1, ctx_.writer.max_parts_in_flight);
  const uint64_t cursor = cursor_;  // mu_ is held: no write moves it meanwhile
  for (;;) {
    int next;
    {
      MutexLock done(done_mu_);
      if (parts_.first_error()) return *parts_.first_error();
      const PartTable::Ready ready =
          parts_.FirstReady([&](int i) { return all ? i < limit : Eligible(i, cursor); });
      if (ready.next < 0) return Status::Ok();
      // A staged part may wait for a later write (or Commit) to start it; a
      // part filled in memory is waited for (backpressure), or the writer
      // would run ahead filling more buffers.
      if (parts_.in_flight() >= window && !all && ready.count <= static_cast<size_t>(window) &&
          !fills_.Has(ready.next)) {
        return Status::Ok();
      }
      next = ready.next;
    }
    {
      MutexLock done(done_mu_);
      while (!(parts_.in_flight() < window)) cv_.Wait(done_mu_);
    }
    if (Status s = StartPart(next, all); !s.ok()) return Fail(s.error());
  }
}

// Takes a slot and a buffer for part `i` (the backpressure: this may wait for
// the budget) and has the runner read it from the staging file and send it.
// A part filled in memory already has its buffer; it is staged while it is
// sent, unless this is the commit (`final`).
Status StagedUpload::StartPart(int i, bool final) {
  if (Status s = EnsureUpload(layout_.IndexOf(cursor_)); !s.ok()) return s;
  const uint64_t start = layout_.Start(i);
  const uint64_t len = std::min(layout_.End(i), size_.load()) - start;
  auto job = std::make_shared<Sending>();
  std::optional<uint32_t> sum;  // known already (filled in order)
  bool from_memory = false, stage = false;
  // The part's base bytes past its in-order run, if still deferred (a part
  // filled in memory is spilled to the staging file then).
  if (Status s = Materialize(i); !s.ok()) return s;
  bool cut;
  {
    MutexLock done(done_mu_);
    cut = parts_.StagingCut(i);
  }
  if (!fills_.Has(i) && cut) {
    // Its bytes were in memory only and are gone: a part goes again only
    // when a write changes it, and none can after Commit cut its staging.
    return MakeError(EIO, "StagingCut",
                     "part " + std::to_string(i + 1) + " of " + key_ + " is no longer staged");
  }
  if (fills_.Has(i)) {
    FilledParts::Sent sent = fills_.Take(i, len);
    job->body = std::move(sent.body);
    sum = sent.crc32c;
    from_memory = true;
    stage = !final;
  } else {
    job->body = ctx_.budget->Take(len);
  }
  if (stage) job->users.store(2);
  uint64_t gen;
  {
    MutexLock done(done_mu_);
    gen = parts_.StartSend(i, stage);
  }
  // The task counts as in flight (and as a staging write) until it ends, and
  // shares the staging store: a staging write may outlive Commit.
  auto task = [this, staging = staging_, fill = cache_fill_, job, p = upload_.PartParams(i + 1), i,
               gen, start, from_memory, stage, sum] {
    if (from_memory) {
      SendFilled(staging, fill.get(), job, p, i, gen, start, stage, sum);
    } else {
      SendStaged(*staging, fill.get(), job, p, i, gen, start);
    }
  };
  if (ctx_.runner) {
    ctx_.runner->Post(std::move(task));
  } else {
    task();
  }
  return Status::Ok();
}

// On the runner, for a part filled in memory: sums it unless that was done as
// it was written, hands it to the upload and, meanwhile, writes it to the
// staging file (`stage`) for writes that may come back to it.
void StagedUpload::SendFilled(const std::shared_ptr<StagingStore>& staging, cache::WriteFill* fill,
                              const std::shared_ptr<Sending>& job, s3::UploadPartParams p, int i,
                              uint64_t gen, uint64_t start, bool stage,
                              std::optional<uint32_t> sum) {
  if (p.checksum == s3::BodyChecksum::kCrc32c) {
    p.crc32c = s3::Crc32cToBase64(sum ? *sum : s3::Crc32c(job->body.bytes()));
  }
  if (fill != nullptr) fill->Part(i, gen, start, job->body.bytes());
  ctx_.client->UploadPartAsync(
      p, job->body.bytes(),
      [this, job, i, gen](const Result<s3::UploadPartResult>& r) { PartDone(*job, i, gen, r); });
  if (!stage) return;
  auto write = [this, staging, job, i, start] { StageFilled(*staging, job, i, start); };
  if (ctx_.stager) {
    ctx_.stager->Post(std::move(write));
  } else {
    write();
  }
}

// On the runner: reads the part (the bytes as they are now; a write since
// StartPart bumped the generation, so this upload's ETag will be dropped),
// summed as it is read, and uploads it. Nothing of `this` is touched once
// the upload is handed over: its completion may end the writer's wait.
void StagedUpload::SendStaged(StagingStore& staging, cache::WriteFill* fill,
                              const std::shared_ptr<Sending>& job, s3::UploadPartParams p, int i,
                              uint64_t gen, uint64_t start) {
  const bool crc = p.checksum == s3::BodyChecksum::kCrc32c;
  auto sum = staging.ReadSummed(start, job->body.bytes(), crc);
  if (!sum.ok()) {
    PartDone(*job, i, gen, sum.error());
    return;
  }
  if (*sum) p.crc32c = s3::Crc32cToBase64(**sum);
  if (fill != nullptr) fill->Part(i, gen, start, job->body.bytes());
  ctx_.client->UploadPartAsync(
      p, job->body.bytes(),
      [this, job, i, gen](const Result<s3::UploadPartResult>& r) { PartDone(*job, i, gen, r); });
}

// On the stager: writes part `i` (filled in memory) to the staging file until
// the cut says nothing will read it again.
void StagedUpload::StageFilled(StagingStore& staging, const std::shared_ptr<Sending>& job, int i,
                               uint64_t start) {
  const StagingStore::Staged staged =
      staging.WritePieces(start, job->body.bytes(), ctx_.staging.stage_piece);
  if (staged.unneeded) {
    spdlog::info("staging part {} of s3://{}/{} after the commit: {} (not needed)", i + 1, bucket_,
                 key_, staged.unneeded->ToString());
  }
  if (!staged.status.ok()) {
    spdlog::warn("staging part {} of s3://{}/{}: {}", i + 1, bucket_, key_,
                 staged.status.error().ToString());
  }
  Unuse(*job);
  MutexLock done(done_mu_);  // the last touch of `this`
  parts_.StagingDone(i, staged.cut);
  if (!staged.status.ok()) parts_.Fail(staged.status.error());
  cv_.NotifyAll();
}

// One user of the part's buffer is done with it; the last gives it back.
void StagedUpload::Unuse(Sending& job) {
  if (job.users.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ctx_.budget->Give(std::move(job.body));
  }
}

// The end of part `i`'s upload (or of its read-back): gives the buffer back
// and records the ETag, or the error, or that the part must go again.
void StagedUpload::PartDone(Sending& job, int i, uint64_t gen,
                            const Result<s3::UploadPartResult>& r) {
  Unuse(job);
  if (!r.ok()) {
    spdlog::warn("UploadPart {} of s3://{}/{}: {}", i + 1, bucket_, key_, r.error().ToString());
  }
  MutexLock done(done_mu_);
  parts_.SendDone(i, gen, r);
  cv_.NotifyAll();
}

void StagedUpload::WaitForUploads() {
  MutexLock done(done_mu_);
  while (!(parts_.in_flight() == 0)) cv_.Wait(done_mu_);
}

void StagedUpload::WaitForStagingWrites() {
  MutexLock done(done_mu_);
  while (!(parts_.staging_writes() == 0)) cv_.Wait(done_mu_);
}

void StagedUpload::WaitForAllParts() {
  MutexLock done(done_mu_);
  while (!(parts_.in_flight() == 0 && parts_.staging_writes() == 0)) cv_.Wait(done_mu_);
}

}  // namespace bucketfs::upload
