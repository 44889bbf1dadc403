// FilledParts: see filled_parts.h.
#include "upload/filled_parts.h"

#include <algorithm>
#include <cstring>

#include "s3/crc32c.h"

namespace bucketfs::upload {

bool FilledParts::Start(int i, uint64_t size) {
  auto buf = budget_->TakeFill(size);
  if (!buf) return false;
  fills_.emplace(i, Fill{std::move(*buf)});
  return true;
}

void FilledParts::Write(int i, uint64_t offset, std::span<const std::byte> data) {
  Fill& f = fills_.at(i);
  std::byte* bytes = f.buf.data.get();
  if (offset > f.end) {  // a hole: reads as zeros, like the staging file's
    std::memset(bytes + f.end, 0, offset - f.end);
    if (crc32c_ && f.summed) f.crc = s3::Crc32c({bytes + f.end, offset - f.end}, f.crc);
    f.end = offset;
  }
  const std::span<std::byte> dst(bytes + offset, data.size());
  if (offset == f.end && crc32c_ && f.summed) {
    f.crc = s3::CopyCrc32c(dst, data, f.crc);  // summed on the way: one pass
  } else {
    std::memcpy(dst.data(), data.data(), data.size());
    // Bytes summed already changed: the sender sums the part.
    if (offset != f.end) f.summed = false;
  }
  f.end = std::max(f.end, offset + data.size());
}

void FilledParts::Read(int i, uint64_t offset, std::span<std::byte> dest) const {
  const Fill& f = fills_.at(i);
  const uint64_t held = offset < f.end ? std::min<uint64_t>(f.end - offset, dest.size()) : 0;
  if (held > 0) std::memcpy(dest.data(), f.buf.data.get() + offset, held);
  if (held < dest.size()) std::memset(dest.data() + held, 0, dest.size() - held);
}

FilledParts::Sent FilledParts::Take(int i, uint64_t len) {
  auto it = fills_.find(i);
  Fill f = std::move(it->second);
  fills_.erase(it);
  budget_->FillSent(f.buf);
  std::byte* bytes = f.buf.data.get();
  if (f.end < len) {  // a hole at the end of the part
    std::memset(bytes + f.end, 0, len - f.end);
    if (crc32c_ && f.summed) f.crc = s3::Crc32c({bytes + f.end, len - f.end}, f.crc);
  }
  f.buf.size = len;
  Sent sent{std::move(f.buf), std::nullopt};
  if (crc32c_ && f.summed) sent.crc32c = f.crc;
  return sent;
}

Status FilledParts::Spill(cache::StagingFile& staging, const PartLayout& layout) {
  Status result = Status::Ok();
  for (auto& [i, f] : fills_) {
    if (result.ok()) result = staging.Write(layout.Start(i), {f.buf.data.get(), f.end});
    budget_->Give(std::move(f.buf));
  }
  fills_.clear();
  return result;
}

Status FilledParts::SpillPart(int i, cache::StagingFile& staging, const PartLayout& layout) {
  auto it = fills_.find(i);
  Fill f = std::move(it->second);
  fills_.erase(it);
  Status s = staging.Write(layout.Start(i), {f.buf.data.get(), f.end});
  budget_->Give(std::move(f.buf));
  return s;
}

void FilledParts::Release() {
  for (auto& [i, f] : fills_) budget_->Give(std::move(f.buf));
  fills_.clear();
}

}  // namespace bucketfs::upload
