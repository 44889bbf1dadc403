// StagedWriter: writes at any offset, staged on local disk, streamed to S3 as
// a multipart upload part by part (see staged_writer.h).
//
// Locks: mu_ serializes Write/Truncate/Commit/Abort and may be held across S3
// calls, staging I/O and waits for upload slots; done_mu_ guards what upload
// completions (transport threads) touch and is never held across a call.
// Order: mu_ before done_mu_.
#include "fuse/staged_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <vector>

#include "fuse/filled_parts.h"
#include "fuse/part_layout.h"
#include "fuse/staged_part_state.h"
#include "s3/crc32c.h"

namespace bucketfs::fs {
namespace {

constexpr uint64_t kMinCopyPart = 5ull << 20;  // S3's smallest non-last part
// CopyPart's error for a copy into a CRC32C upload that came without the sum.
constexpr std::string_view kCopyUnsummed = "CopyUnsummed";

class StagedWriter : public FileWriter {
 public:
  StagedWriter(const StagingContext& context, std::string bucket, std::string key,
               std::unique_ptr<cache::StagingFile> staging, std::optional<BaseObject> base)
      : ctx_(context),
        layout_(context.writer.part_size),
        bucket_(std::move(bucket)),
        key_(std::move(key)),
        staging_(std::shared_ptr<cache::StagingFile>(std::move(staging))),
        base_(std::move(base)),
        checksum_(context.writer.checksum),
        fills_(context.budget, context.writer.checksum == s3::BodyChecksum::kCrc32c) {
    if (base_) size_.store(base_->size);
  }

  ~StagedWriter() override {
    std::lock_guard lock(mu_);
    cut_staging_.store(true, std::memory_order_release);  // nothing reads it again
    if (!committed_) AbortLocked();
    WaitForAllParts();  // completions must not outlive this object
    fills_.Release();
  }

  uint64_t size() const override { return size_.load(std::memory_order_acquire); }

  Status Write(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(mu_);
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
      std::lock_guard done(done_mu_);
      for (int i = first; i <= last; ++i) Touch(i);
    }
    if (end > size_.load()) size_.store(end, std::memory_order_release);
    cursor_ = end;
    return Pump(false);
  }

  Status Truncate(uint64_t new_size) override {
    std::lock_guard lock(mu_);
    if (Status s = CheckWritable(); !s.ok()) return s;
    const uint64_t old_size = size_.load();
    if (new_size == old_size) return Status::Ok();
    // The part holding the new end changes (cut or zero-extended); so does
    // every part between the old and the new end.
    const uint64_t lo = std::min(old_size, new_size);
    const uint64_t hi = std::max(old_size, new_size);
    const int first = layout_.IndexOf(lo), last = layout_.IndexOf(hi == 0 ? 0 : hi - 1);
    if (lo < hi) {
      if (Status s = Materialize(first); !s.ok()) return Fail(s.error());
    }
    // Rare (ftruncate while writing): parts filled in memory go to the
    // staging file first, so the cut and zero-extension happen in one place.
    // A staging write still under way could land past the new end.
    if (Status s = fills_.Spill(*staging_, layout_); !s.ok()) return Fail(s.error());
    WaitForStagingWrites();
    if (Status s = staging_->Truncate(new_size); !s.ok()) return Fail(s.error());
    if (base_ && base_->size > new_size)
      base_->size = new_size;  // base bytes past the end are gone
    modified_ = true;
    {
      std::lock_guard done(done_mu_);
      for (int i = first; i <= last; ++i) {
        Touch(i);
        parts_[i].materialized = true;
      }
    }
    size_.store(new_size, std::memory_order_release);
    return Status::Ok();
  }

  Result<CommittedObject> Commit() override {
    std::lock_guard lock(mu_);
    if (!committed_) {
      committed_ = CommitLocked();
      WaitForUploads();  // staging writes under way end on their own (the destructor waits)
      fills_.Release();
      ReleaseStaging();  // frees the disk space now, not when the handle goes
    }
    return *committed_;
  }

  void Abort() override {
    std::lock_guard lock(mu_);
    if (committed_) return;
    cut_staging_.store(true, std::memory_order_release);  // nothing reads it again
    AbortLocked();
    fills_.Release();
    committed_ = Result<CommittedObject>(MakeError(ECANCELED, "Aborted", "upload aborted"));
    ReleaseStaging();
  }

 private:
  // Drops the staging file: its space counts as free at once, its last
  // close runs on the runner. Closing the anonymous file makes the file
  // system free its blocks, and that can wait on the disk: on ext4 with
  // -o discard, 137 ms for a 1 GiB file (strace), and the fsync of a 1 GiB
  // write spent 100-650 ms with the machine idle, 12-30% of the write's
  // time. The upload's outcome does not depend on it, so the reply does not
  // wait for it. It runs on the closer, not the runner: with 4 writers, both
  // runner threads sat in ext4's discard of finished files while the other
  // files' last parts waited to be sent.
  void ReleaseStaging() REQUIRES(mu_) {
    if (!staging_) return;
    staging_->ReleaseSpace();
    TaskRunner* closer = ctx_.closer ? ctx_.closer.get() : ctx_.runner.get();
    if (!closer) {
      staging_.reset();
      return;
    }
    closer->Post([file = std::move(staging_)] {});
  }

  Status CheckWritable() REQUIRES(mu_) {
    if (committed_) return MakeError(EBADF, "Committed", "file already flushed to " + key_);
    if (!staging_) return MakeError(EIO, "NoStaging", "no staging file for " + key_);
    if (auto e = StickyError()) return *e;
    return Status::Ok();
  }

  // Remembers the first error; Commit will abort and return it.
  Status Fail(const Error& e) REQUIRES(mu_) {
    std::lock_guard done(done_mu_);
    if (!first_error_) first_error_ = e;
    return e;
  }

  // Marks part `i` changed. REQUIRES done_mu_.
  void Touch(int i) {
    if (static_cast<size_t>(i) >= parts_.size()) parts_.resize(i + 1);
    PartState& p = parts_[i];
    ++p.gen;
    p.touched = true;
    if (!p.in_flight) pending_.insert(i);  // in flight: re-queued when it completes
  }

  // Writes `data` (inside part `i`) at `at`: into the part's fill buffer when
  // it is filled in memory (or may start to be), else into the staging file.
  Status WritePart(int i, uint64_t at, std::span<const std::byte> data) REQUIRES(mu_) {
    bool filled = fills_.Has(i);
    if (!filled && CanFill(i, at, data.size())) filled = fills_.Start(i, layout_.SizeOf(i));
    if (!filled) {
      WaitStaged(i);  // its bytes must be in the file before these land
      return staging_->Write(at, data);
    }
    fills_.Write(i, at - layout_.Start(i), data);
    return Status::Ok();
  }

  // Part `i` may be filled in memory from a write of `n` bytes at `at`: a
  // part never written before, with no base bytes in it or written from its
  // start (the in-order run that replaces them: a rewrite of an old file).
  // A write that leaves the run, or sending the part before the run covers
  // its base bytes, spills it to the staging file first (Materialize).
  // The first part only when the file starts with a large write (dd, cp,
  // fio, a stream): through the staging file it cost a 1 GiB fio write
  // ~25 ms of buffered writes into fresh page cache on the writer's path
  // (perf: 5% of the daemon's CPU). Small files and formats that start with
  // a small header they come back to (zip: torch.save, numpy.savez) keep it
  // in the staging file.
  bool CanFill(int i, uint64_t at, uint64_t n) REQUIRES(mu_) {
    constexpr uint64_t kFirstPartFillMin = 128 << 10;
    if (!ctx_.staging.fill_in_memory || fills_.Full()) return false;
    if (i == 0 && (at != 0 || n < kFirstPartFillMin)) return false;
    if (base_ && layout_.Start(i) < base_->size && at != layout_.Start(i)) return false;
    return Untouched(i);
  }

  // Part `i` was neither written nor filled since the writer started.
  bool Untouched(int i) {
    std::lock_guard done(done_mu_);
    return static_cast<size_t>(i) >= parts_.size() || !parts_[i].touched;
  }

  // Waits until part `i`'s fill buffer is in the staging file.
  void WaitStaged(int i) REQUIRES(mu_) {
    std::unique_lock done(done_mu_);
    cv_.wait(done,
             [&] { return static_cast<size_t>(i) >= parts_.size() || !parts_[i].staging_pending; });
  }

  // The end of the base object's bytes in part `i` (its start: none).
  uint64_t BaseEnd(int i) const REQUIRES(mu_) {
    const uint64_t start = layout_.Start(i);
    if (!base_ || start >= base_->size) return start;
    return std::min(layout_.End(i), base_->size);
  }

  // A write of [lo, hi) in part `i` that needs no base bytes fetched first:
  // the part has them already (or has none), or the write continues the
  // in-order run from the part's start (which it then extends).
  bool ExtendsPrefix(int i, uint64_t lo, uint64_t hi) REQUIRES(mu_) {
    std::lock_guard done(done_mu_);
    if (static_cast<size_t>(i) >= parts_.size()) parts_.resize(i + 1);
    PartState& p = parts_[i];
    if (p.materialized) return true;
    const uint64_t start = layout_.Start(i);
    if (lo != start + p.prefix) return false;
    p.prefix = hi - start;
    if (hi >= BaseEnd(i)) p.materialized = true;  // every base byte overwritten
    return true;
  }

  // Brings the base object's bytes of part `i` that its in-order run from
  // the start has not overwritten into the staging file: before a write
  // that leaves that run, and before the part is sent. A part filled in
  // memory (the run so far) goes to the staging file first.
  Status Materialize(int i) REQUIRES(mu_) {
    uint64_t start;
    {
      std::lock_guard done(done_mu_);
      if (static_cast<size_t>(i) >= parts_.size()) parts_.resize(i + 1);
      if (parts_[i].materialized) return Status::Ok();
      parts_[i].materialized = true;
      start = layout_.Start(i) + parts_[i].prefix;
    }
    if (fills_.Has(i)) {
      if (Status s = fills_.SpillPart(i, *staging_, layout_); !s.ok()) return s;
    }
    if (start >= BaseEnd(i)) return Status::Ok();
    const uint64_t len = BaseEnd(i) - start;
    PartBuffer buf = ctx_.budget->Take(len);
    s3::GetObjectParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.offset = start;
    p.length = len;
    p.if_match = base_->etag;
    auto r = ctx_.client->GetObject(p, buf.bytes());
    Status s =
        r.ok() ? staging_->Write(start, buf.bytes()) : Status(Log("GetObject (base)", r.error()));
    ctx_.budget->Give(std::move(buf));
    return s;
  }

  bool Eligible(int i) const REQUIRES(mu_) {
    const uint64_t end = layout_.End(i);
    return end <= size_.load() && end + ctx_.staging.settle_bytes <= cursor_;
  }

  // Starts uploads of pending parts: while writing, the final ones (waiting
  // for a slot only when more than a window of them is queued); at commit
  // (`all`), every pending part below `limit`, waiting for slots.
  Status Pump(bool all, int limit = 0) REQUIRES(mu_) {
    const int window = std::max(1, ctx_.writer.max_parts_in_flight);
    for (;;) {
      int next = -1;
      size_t queued = 0;
      {
        std::lock_guard done(done_mu_);
        if (first_error_) return *first_error_;
        for (int i : pending_) {
          if (all ? i >= limit : !Eligible(i)) break;
          if (next < 0) next = i;
          ++queued;
        }
        if (next < 0) return Status::Ok();
        // A staged part may wait for a later write (or Commit) to start it;
        // a part filled in memory is waited for (backpressure), or the
        // writer would run ahead filling more buffers.
        if (in_flight_ >= window && !all && queued <= static_cast<size_t>(window) &&
            !fills_.Has(next)) {
          return Status::Ok();
        }
      }
      {
        std::unique_lock done(done_mu_);
        cv_.wait(done, [&] { return in_flight_ < window; });
      }
      if (Status s = StartPart(next, all); !s.ok()) return Fail(s.error());
    }
  }

  // Creates the multipart upload if there is none yet, for an object of `n`
  // parts as far as the writer knows (see UploadChecksum).
  Status EnsureUpload(int n) REQUIRES(mu_) {
    if (!upload_id_.empty()) return Status::Ok();
    checksum_ = UploadChecksum(n);
    s3::CreateMultipartUploadParams cp;
    cp.bucket = bucket_;
    cp.key = key_;
    cp.checksum = checksum_;
    auto r = ctx_.client->CreateMultipartUpload(cp);
    if (!r.ok()) return Log("CreateMultipartUpload", r.error());
    upload_id_ = r->upload_id;
    return Status::Ok();
  }

  // The checksum of a new upload for an object of `n` parts: the configured
  // one, except MD5 when a CRC32C upload could not complete: the store
  // reports no CRC32C for copied parts (this writer or the mount saw it) and
  // a part below `n` would be copied from the base.
  s3::BodyChecksum UploadChecksum(int n) REQUIRES(mu_) {
    const s3::BodyChecksum configured = ctx_.writer.checksum;
    if (configured != s3::BodyChecksum::kCrc32c || !base_) return configured;
    if (!copies_unsummed_ && !(ctx_.copies_unsummed && ctx_.copies_unsummed->load())) {
      return configured;
    }
    for (int i = 0; i < n; ++i) {
      if (Untouched(i) && CanCopy(i, n)) return s3::BodyChecksum::kMd5;
    }
    return configured;
  }

  // The store copied a part into this CRC32C upload without reporting the
  // part's CRC32C, which Complete must repeat: aborts the upload and starts
  // an MD5 one for the `n` parts; every part sent so far (its bytes are in
  // the staging file) goes again.
  Status RestartWithMd5(int n) REQUIRES(mu_) {
    spdlog::info("{}: the store reports no CRC32C for copied parts; uploading with Content-MD5",
                 key_);
    copies_unsummed_ = true;
    if (ctx_.copies_unsummed) ctx_.copies_unsummed->store(true);
    AbortLocked();  // waits for the parts in flight and their staging writes
    {
      std::lock_guard done(done_mu_);
      for (size_t i = 0; i < parts_.size(); ++i) {
        PartState& part = parts_[i];
        part.has_etag = false;
        part.crc32c.clear();
        if (part.touched) pending_.insert(static_cast<int>(i));
      }
    }
    return EnsureUpload(n);
  }

  // Takes a slot and a buffer for part `i` (the backpressure: this may wait
  // for the budget) and has the runner read it from the staging file and
  // send it. A part filled in memory already has its buffer; it is staged
  // while it is sent, unless this is the commit (`final`).
  Status StartPart(int i, bool final) REQUIRES(mu_) {
    if (Status s = EnsureUpload(layout_.IndexOf(cursor_)); !s.ok()) return s;
    const uint64_t start = layout_.Start(i);
    const uint64_t len = std::min(layout_.End(i), size_.load()) - start;
    auto job = std::make_shared<Sending>();
    std::optional<uint32_t> sum;  // known already (filled in order)
    bool from_memory = false, stage = false;
    // The part's base bytes past its in-order run, if still deferred (a
    // part filled in memory is spilled to the staging file then).
    if (Status s = Materialize(i); !s.ok()) return s;
    if (!fills_.Has(i) && StagingCut(i)) {
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
      std::lock_guard done(done_mu_);
      PartState& p = parts_[i];
      pending_.erase(i);
      p.in_flight = true;
      gen = p.gen;
      ++in_flight_;
      if (stage) {
        p.staging_pending = true;
        ++staging_writes_;
      }
    }
    s3::UploadPartParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    p.part_number = i + 1;
    p.checksum = checksum_;
    // The task counts in in_flight_ (and staging_writes_) until it ends,
    // and shares the staging file: a staging write may outlive Commit.
    auto task = [this, staging = staging_, job, p = std::move(p), i, gen, start, from_memory, stage,
                 sum] {
      if (from_memory) {
        SendFilled(staging, job, p, i, gen, start, stage, sum);
      } else {
        SendPart(*staging, job, p, i, gen, start);
      }
    };
    if (ctx_.runner) {
      ctx_.runner->Post(std::move(task));
    } else {
      task();
    }
    return Status::Ok();
  }

  // On the runner, for a part filled in memory: sums it unless that was done
  // as it was written, hands it to the upload and, meanwhile, writes it to
  // the staging file (`stage`) for writes that may come back to it.
  void SendFilled(const std::shared_ptr<cache::StagingFile>& staging,
                  const std::shared_ptr<Sending>& job, s3::UploadPartParams p, int i, uint64_t gen,
                  uint64_t start, bool stage, std::optional<uint32_t> sum) {
    if (p.checksum == s3::BodyChecksum::kCrc32c) {
      p.crc32c = s3::Crc32cToBase64(sum ? *sum : s3::Crc32c(job->body.bytes()));
    }
    ctx_.client->UploadPartAsync(
        p, job->body.bytes(),
        [this, job, i, gen](Result<s3::UploadPartResult> r) { PartDone(*job, i, gen, r); });
    if (!stage) return;
    auto write = [this, staging, job, i, start] { StageFilled(*staging, job, i, start); };
    if (ctx_.stager) {
      ctx_.stager->Post(std::move(write));
    } else {
      write();
    }
  }

  // On the stager: writes part `i` (filled in memory) to the staging file,
  // piece by piece, until Commit (or Abort) says nothing will read it again.
  void StageFilled(cache::StagingFile& staging, const std::shared_ptr<Sending>& job, int i,
                   uint64_t start) {
    const std::span<std::byte> bytes = job->body.bytes();
    const uint64_t piece = std::max<uint64_t>(ctx_.staging.stage_piece, 1);
    Status s = Status::Ok();
    bool cut = false;
    for (uint64_t off = 0; off < bytes.size() && s.ok(); off += piece) {
      if (cut_staging_.load(std::memory_order_acquire)) {
        cut = true;
        break;
      }
      s = staging.WriteBuffered(start + off,
                                bytes.subspan(off, std::min<uint64_t>(piece, bytes.size() - off)));
    }
    // A piece that failed once Commit had cut the staging is not an error:
    // nothing will read it (the upload's outcome stands, ENOSPC or not).
    if (!s.ok() && cut_staging_.load(std::memory_order_acquire)) {
      spdlog::info("staging part {} of s3://{}/{} after the commit: {} (not needed)", i + 1,
                   bucket_, key_, s.error().ToString());
      s = Status::Ok();
      cut = true;
    }
    Unuse(*job);
    StagingDone(i, s, cut);  // the last touch of `this`
  }

  // The staging write of part `i` (filled in memory) ended; `cut`: before
  // all of it was written.
  void StagingDone(int i, const Status& s, bool cut) {
    if (!s.ok()) {
      spdlog::warn("staging part {} of s3://{}/{}: {}", i + 1, bucket_, key_, s.error().ToString());
    }
    std::lock_guard done(done_mu_);
    parts_[i].staging_pending = false;
    parts_[i].staging_cut = cut;
    if (!s.ok() && !first_error_) first_error_ = s.error();
    --staging_writes_;
    cv_.notify_all();
  }

  // One user of the part's buffer is done with it; the last gives it back.
  void Unuse(Sending& job) {
    if (job.users.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ctx_.budget->Give(std::move(job.body));
    }
  }

  // On the runner: reads the part (the bytes as they are now; a write since
  // StartPart bumped the generation, so this upload's ETag will be dropped)
  // and uploads it. CRC32C parts are summed piece by piece as they are read,
  // while each piece is still in the CPU cache (summing the 16 MiB afterwards
  // reads it from memory again: a fifth of the daemon's CPU in write4).
  // Nothing of `this` is touched once the upload is handed over: its
  // completion may end the writer's wait for in-flight parts.
  void SendPart(cache::StagingFile& staging, const std::shared_ptr<Sending>& job,
                s3::UploadPartParams p, int i, uint64_t gen, uint64_t start) {
    constexpr uint64_t kPiece = 256 << 10;
    const bool crc = p.checksum == s3::BodyChecksum::kCrc32c;
    uint32_t sum = 0;
    const std::span<std::byte> bytes = job->body.bytes();
    for (uint64_t off = 0; off < bytes.size(); off += kPiece) {
      const auto piece = bytes.subspan(off, std::min<uint64_t>(kPiece, bytes.size() - off));
      if (Status s = staging.Read(start + off, piece); !s.ok()) {
        PartDone(*job, i, gen, s.error());
        return;
      }
      if (crc) sum = s3::Crc32c(piece, sum);
    }
    if (crc) p.crc32c = s3::Crc32cToBase64(sum);
    staging.DropCached(start, job->body.size);
    ctx_.client->UploadPartAsync(
        p, job->body.bytes(),
        [this, job, i, gen](Result<s3::UploadPartResult> r) { PartDone(*job, i, gen, r); });
  }

  // The end of part `i`'s upload (or of its read-back): gives the buffer
  // back and records the ETag, or the error, or that the part must go again.
  void PartDone(Sending& job, int i, uint64_t gen, const Result<s3::UploadPartResult>& r) {
    Unuse(job);
    std::lock_guard done(done_mu_);
    PartState& part = parts_[i];
    part.in_flight = false;
    if (!r.ok()) {
      spdlog::warn("UploadPart {} of s3://{}/{}: {}", i + 1, bucket_, key_, r.error().ToString());
      if (!first_error_) first_error_ = r.error();
    } else if (gen == part.gen) {
      part.has_etag = true;
      part.etag_gen = gen;
      part.etag = r->etag;
      part.crc32c = r->checksum_crc32c;
    }
    // Changed while it was on the wire: send it again (same number).
    if (gen != part.gen || !r.ok()) pending_.insert(i);
    --in_flight_;
    cv_.notify_all();
  }

  // Part `i` of an object with `n` parts may be copied from the base when it
  // is untouched and its range is valid for UploadPartCopy.
  bool CanCopy(int i, int n) const REQUIRES(mu_) {
    if (!base_) return false;
    const uint64_t start = layout_.Start(i);
    const uint64_t end = std::min(layout_.End(i), size_.load());
    if (end > base_->size) return false;
    return i == n - 1 || (end == layout_.End(i) && end - start >= kMinCopyPart);
  }

  Result<CommittedObject> CommitLocked() REQUIRES(mu_) {
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
    for (int i = 0; i < n; ++i) {
      bool untouched;
      {
        std::lock_guard done(done_mu_);
        if (static_cast<size_t>(i) >= parts_.size()) parts_.resize(i + 1);
        untouched = !parts_[i].touched;
      }
      if (!untouched) continue;
      if (CanCopy(i, n) && !copy_unsupported_) {
        Status s = CopyPart(i);
        if (s.ok()) continue;
        if (s.error().code == kCopyUnsummed) {  // at most once: the new upload is MD5
          if (Status r = RestartWithMd5(n); !r.ok()) return Abandon(r.error());
          i = -1;  // copies into the old upload are gone with it
          continue;
        }
        // Stores without UploadPartCopy (s3rver, some gateways) answer 501
        // NotImplemented: stage the range from the base and upload it instead.
        if (s.error().errno_value != ENOTSUP && s.error().code != "NotImplemented") {
          return Abandon(s.error());
        }
        spdlog::info("{}: the store has no UploadPartCopy; uploading unchanged parts instead",
                     key_);
        copy_unsupported_ = true;
      }
      // Untouched but not copyable (a short base tail, or a hole): stage it.
      if (Status s = Materialize(i); !s.ok()) return Abandon(s.error());
      std::lock_guard done(done_mu_);
      Touch(i);
    }
    // From here on no part is read from the staging file unless it is
    // pending now: a part sent before goes again only when a write changes
    // it (none can come) or its upload fails (that fails the commit). So
    // staging writes not yet done are dropped, and the one under way is not
    // waited for: close() waits for the upload, not for the disk.
    cut_staging_.store(true, std::memory_order_release);
    // A part changed while on the wire comes back to pending_ when that
    // upload ends: pump until every part below n is clean or one failed.
    for (;;) {
      if (Status s = Pump(true, n); !s.ok()) return Abandon(s.error());
      WaitForUploads();
      std::lock_guard done(done_mu_);
      if (first_error_ || pending_.empty() || *pending_.begin() >= n) break;
    }
    s3::CompleteMultipartUploadParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    std::optional<Error> failed;  // abandoned outside done_mu_ (AbortLocked takes it)
    {
      std::lock_guard done(done_mu_);
      failed = first_error_;
      for (int i = 0; i < n && !failed; ++i) {
        const PartState& part = parts_[i];
        if (!part.has_etag || part.etag_gen != part.gen) {
          failed = MakeError(EIO, "PartMissing",
                             "part " + std::to_string(i + 1) + " of " + key_ + " was not uploaded");
        }
        p.parts.push_back({i + 1, part.etag, part.crc32c});
      }
    }
    if (failed) return Abandon(*failed);
    auto r = ctx_.client->CompleteMultipartUpload(p);
    if (!r.ok()) return Abandon(Log("CompleteMultipartUpload", r.error()));
    upload_id_.clear();
    return CommittedObject{r->etag, total};
  }

  Result<CommittedObject> PutWhole(uint64_t total) REQUIRES(mu_) {
    if (Status s = Materialize(0); !s.ok()) return s.error();
    PartBuffer body;
    if (fills_.Has(0)) {  // a small file that started with a large write
      body = fills_.Take(0, total).body;
    } else {
      body = ctx_.budget->Take(total);
      if (Status s = staging_->Read(0, body.bytes()); !s.ok()) {
        ctx_.budget->Give(std::move(body));
        return s.error();
      }
    }
    s3::PutObjectParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.checksum = ctx_.writer.checksum;
    auto r = ctx_.client->PutObject(p, body.bytes());
    ctx_.budget->Give(std::move(body));
    if (!r.ok()) return Log("PutObject", r.error());
    return CommittedObject{r->etag, total};
  }

  Status CopyPart(int i) REQUIRES(mu_) {
    s3::UploadPartCopyParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    p.part_number = i + 1;
    p.source_bucket = bucket_;
    p.source_key = key_;
    p.source_offset = layout_.Start(i);
    p.source_length = std::min(layout_.End(i), size_.load()) - layout_.Start(i);
    p.source_if_match = base_->etag;
    auto r = ctx_.client->UploadPartCopy(p);
    if (!r.ok()) return Log("UploadPartCopy", r.error());
    if (checksum_ == s3::BodyChecksum::kCrc32c && r->checksum_crc32c.empty()) {
      return MakeError(EIO, std::string(kCopyUnsummed),
                       "UploadPartCopy reported no CRC32C for part " + std::to_string(i + 1));
    }
    std::lock_guard done(done_mu_);
    PartState& part = parts_[i];
    part.has_etag = true;
    part.etag_gen = part.gen;
    part.etag = r->etag;
    part.crc32c = r->checksum_crc32c;  // Complete repeats it (CRC32C uploads)
    return Status::Ok();
  }

  Error Abandon(const Error& e) REQUIRES(mu_) {
    AbortLocked();
    return e;
  }

  void WaitForStagingWrites() {
    std::unique_lock done(done_mu_);
    cv_.wait(done, [&] { return staging_writes_ == 0; });
  }

  void WaitForUploads() {
    std::unique_lock done(done_mu_);
    cv_.wait(done, [&] { return in_flight_ == 0; });
  }

  void WaitForAllParts() {
    std::unique_lock done(done_mu_);
    cv_.wait(done, [&] { return in_flight_ == 0 && staging_writes_ == 0; });
  }

  bool StagingCut(int i) {
    std::lock_guard done(done_mu_);
    return static_cast<size_t>(i) < parts_.size() && parts_[i].staging_cut;
  }

  std::optional<Error> StickyError() {
    std::lock_guard done(done_mu_);
    return first_error_;
  }

  void AbortLocked() REQUIRES(mu_) {
    WaitForAllParts();
    if (upload_id_.empty()) return;
    s3::AbortMultipartUploadParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    Status s = ctx_.client->AbortMultipartUpload(p);
    if (!s.ok()) Log("AbortMultipartUpload", s.error());
    upload_id_.clear();
  }

  Error Log(const char* op, const Error& e) {
    spdlog::warn("{} s3://{}/{}: {}", op, bucket_, key_, e.ToString());
    return e;
  }

  const StagingContext ctx_;
  const PartLayout layout_;
  const std::string bucket_;
  const std::string key_;
  std::atomic<uint64_t> size_{0};

  std::mutex mu_;
  // Null once committed; shared with staging writes that may outlive Commit.
  std::shared_ptr<cache::StagingFile> staging_ GUARDED_BY(mu_);
  std::optional<BaseObject> base_ GUARDED_BY(mu_);
  s3::BodyChecksum checksum_ GUARDED_BY(mu_);     // of the multipart upload's parts
  bool copies_unsummed_ GUARDED_BY(mu_) = false;  // a copy came without its CRC32C
  std::string upload_id_ GUARDED_BY(mu_);
  uint64_t cursor_ GUARDED_BY(mu_) = 0;  // end of the latest write
  bool modified_ GUARDED_BY(mu_) = false;
  bool copy_unsupported_ GUARDED_BY(mu_) = false;  // the store answered 501 to UploadPartCopy
  std::optional<Result<CommittedObject>> committed_ GUARDED_BY(mu_);
  FilledParts fills_ GUARDED_BY(mu_);  // parts filled in memory, not yet sent
  // Set once nothing will read the staging file for parts already sent:
  // their staging writes stop at the next piece (StageFilled).
  std::atomic<bool> cut_staging_{false};

  std::mutex done_mu_;
  std::condition_variable cv_;
  std::vector<PartState> parts_ GUARDED_BY(done_mu_);
  std::set<int> pending_ GUARDED_BY(done_mu_);  // changed, not clean, not in flight
  int in_flight_ GUARDED_BY(done_mu_) = 0;
  int staging_writes_ GUARDED_BY(done_mu_) = 0;  // filled parts being written to staging
  std::optional<Error> first_error_ GUARDED_BY(done_mu_);
};

}  // namespace

uint64_t PartSizeFor(uint64_t base, int part_number) {
  constexpr uint64_t kMaxPart = 5ull << 30;
  const int doublings = std::min((part_number - 1) / 1000, 20);
  return std::min(base << doublings, kMaxPart);
}

std::unique_ptr<FileWriter> NewStagedWriter(const StagingContext& context, std::string bucket,
                                            std::string key,
                                            std::unique_ptr<cache::StagingFile> staging,
                                            std::optional<BaseObject> base) {
  return std::make_unique<StagedWriter>(context, std::move(bucket), std::move(key),
                                        std::move(staging), std::move(base));
}

}  // namespace bucketfs::fs
