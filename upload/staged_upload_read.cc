// StagedUpload: reading the file while it is written (see staged_upload.h).
#include <algorithm>

#include "base/mutex.h"
#include "upload/staged_upload.h"

namespace bucketfs::upload {

Result<size_t> StagedUpload::Read(uint64_t offset, std::span<std::byte> dest) {
  MutexLock lock(mu_);
  if (committed_) return MakeError(EBADF, "Committed", "file already flushed to " + key_);
  if (!staging_) return MakeError(EIO, "NoStaging", "no staging file for " + key_);
  if (auto e = StickyError()) return *e;
  const uint64_t size = size_.load();
  if (offset >= size || dest.empty()) return size_t{0};
  const uint64_t end = std::min<uint64_t>(size, offset + dest.size());
  const int first = layout_.IndexOf(offset), last = layout_.IndexOf(end - 1);
  for (int i = first; i <= last; ++i) {
    const uint64_t lo = std::max(offset, layout_.Start(i));
    const uint64_t hi = std::min(end, layout_.End(i));
    if (Status s = ReadPart(i, lo, dest.subspan(lo - offset, hi - lo)); !s.ok()) return s.error();
  }
  return static_cast<size_t>(end - offset);
}

// Part `i` holds, in order: what its writes put there (its in-order run from
// the start, or everything once its base bytes are staged), then the base
// object's bytes up to BaseEnd, then zeros (a hole or a grown end).
Status StagedUpload::ReadPart(int i, uint64_t at, std::span<std::byte> dest) {
  const uint64_t start = layout_.Start(i);
  const uint64_t base_end = BaseEnd(i);
  std::optional<uint64_t> base_from;
  {
    MutexLock done(done_mu_);
    base_from = parts_.BaseFrom(i, start);
  }
  const uint64_t end = at + dest.size();
  if (!base_from || *base_from >= base_end) return ReadWritten(i, at, dest);
  const auto piece = [&](uint64_t lo, uint64_t hi) {
    lo = std::max(lo, at);
    hi = std::min(hi, end);
    return lo < hi ? dest.subspan(lo - at, hi - lo) : std::span<std::byte>();
  };
  if (auto written = piece(at, *base_from); !written.empty()) {
    if (Status s = ReadWritten(i, at, written); !s.ok()) return s;
  }
  if (auto old = piece(*base_from, base_end); !old.empty()) {
    const uint64_t lo = std::max(at, *base_from);
    if (Status s = upload_.ReadBase(lo, old, base_->etag); !s.ok()) return s;
  }
  if (auto tail = piece(base_end, end); !tail.empty())
    std::fill(tail.begin(), tail.end(), std::byte{0});
  return Status::Ok();
}

// Bytes of part `i` that writes put there: in its fill buffer, else in the
// staging file (once a fill on its way there has landed).
Status StagedUpload::ReadWritten(int i, uint64_t at, std::span<std::byte> dest) {
  if (fills_.Has(i)) {
    fills_.Read(i, at - layout_.Start(i), dest);
    return Status::Ok();
  }
  WaitStaged(i);
  return staging_->file().Read(at, dest);
}

}  // namespace bucketfs::upload
