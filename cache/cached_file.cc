// CachedFile: see data_cache.h.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cache/data_cache.h"
#include "cache/data_cache_internal.h"
#include "s3/crc32c.h"

namespace bucketfs::cache {

using namespace data_cache_internal;  // NOLINT(google-build-using-namespace)

CachedFile::CachedFile(std::shared_ptr<DataCache> cache, std::string rkey, std::string file,
                       std::string path, int fd)
    : cache_(std::move(cache)),
      rkey_(std::move(rkey)),
      file_(std::move(file)),
      path_(std::move(path)),
      fd_(fd) {}

CachedFile::~CachedFile() { ::close(fd_); }  // drops the shared lock

bool CachedFile::Read(uint64_t offset, std::span<std::byte> dest) {
  auto rec = cache_->GetRecord(rkey_);
  if (!rec || rec->file != file_ || !rec->Covers(offset, dest.size())) {
    cache_->counters_.misses.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const uint64_t end = offset + dest.size();
  std::vector<std::byte> edge;  // a block only partly inside dest
  std::vector<uint64_t> bad;
  for (uint64_t i = offset / rec->block_size; i <= (end - 1) / rec->block_size; ++i) {
    const uint64_t b = rec->BlockBegin(i), e = rec->BlockEnd(i);
    const bool inside = b >= offset && e <= end;
    std::byte* buf = dest.data() + (b - offset);
    if (!inside) {
      edge.resize(e - b);
      buf = edge.data();
    }
    if (!PreadAll(fd_, buf, e - b, b) || s3::Crc32c(std::span(buf, e - b)) != rec->crc[i]) {
      bad.push_back(i);
      continue;
    }
    if (!inside) {
      const uint64_t from = std::max(b, offset), to = std::min(e, end);
      std::memcpy(dest.data() + (from - offset), edge.data() + (from - b), to - from);
    }
  }
  if (!bad.empty()) {
    spdlog::warn("data cache {}: {} block(s) failed their checksum; dropped, fetched again", path_,
                 bad.size());
    cache_->counters_.bad_blocks.fetch_add(bad.size(), std::memory_order_relaxed);
    cache_->DropBlocks(rkey_, file_, bad);
    cache_->counters_.misses.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  cache_->counters_.hits.fetch_add(1, std::memory_order_relaxed);
  cache_->counters_.hit_bytes.fetch_add(dest.size(), std::memory_order_relaxed);
  return true;
}

void CachedFile::Fill(uint64_t offset, std::span<const std::byte> data) {
  auto rec = cache_->GetRecord(rkey_);
  if (!rec || rec->file != file_ || data.empty() || offset + data.size() > rec->size) return;
  const uint64_t end = offset + data.size();
  const uint64_t bs = rec->block_size;
  std::vector<uint64_t> blocks;  // absent blocks wholly inside the data
  for (uint64_t i = (offset + bs - 1) / bs; i < rec->Blocks() && rec->BlockEnd(i) <= end; ++i) {
    if (!rec->present[i]) blocks.push_back(i);
  }
  if (blocks.empty()) return;
  uint64_t reserved = 0;
  for (uint64_t i : blocks) reserved += rec->BlockEnd(i) - rec->BlockBegin(i);
  const uint64_t limit = cache_->limit();
  if (reserved > limit) return;
  // The space is reserved in the total before the bytes are written, so that
  // fills running at once in any process never take the cache past its limit.
  if (!cache_->Reserve(reserved)) {
    // Make room down to 90% of the limit, so that not every fill evicts.
    cache_->EvictTo(limit - std::max(reserved, limit / 10));
    if (!cache_->Reserve(reserved)) {
      cache_->counters_.refused_fills.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::vector<uint32_t> crcs;
  for (uint64_t i : blocks) {
    const uint64_t b = rec->BlockBegin(i), e = rec->BlockEnd(i);
    const std::byte* src = data.data() + (b - offset);
    if (!PwriteAll(fd_, src, e - b, b)) {
      spdlog::warn("data cache {}: write failed: {}", path_, std::strerror(errno));
      cache_->Unreserve(reserved);
      return;
    }
    crcs.push_back(s3::Crc32c(std::span(src, e - b)));
  }
  bool complete = false;
  uint64_t added = 0;
  Status s = cache_->env_->Write([&](LmdbTxn& t) -> Status {
    added = 0;
    auto v = t.Get(rkey_);
    if (!v.ok()) return v.error();
    std::optional<CacheRecord> cur = *v ? DecodeRecord(**v) : std::nullopt;
    if (!cur || cur->file != file_) return MakeError(ENOENT, "CacheGone", "record replaced");
    for (size_t k = 0; k < blocks.size(); ++k) {
      const uint64_t i = blocks[k];
      if (cur->present[i]) continue;  // filled meanwhile by another fill
      cur->present[i] = 1;
      cur->crc[i] = crcs[k];
      added += cur->BlockEnd(i) - cur->BlockBegin(i);
    }
    cur->verified = FileStamp{};  // written since verified
    complete = cur->Complete();
    if (Status p = t.Put(rkey_, EncodeRecord(*cur)); !p.ok()) return p;
    // What was reserved but is not new gives its share of the total back.
    const uint64_t total = GetTotal(t);
    const uint64_t surplus = reserved - added;
    return PutTotal(t, total > surplus ? total - surplus : 0);
  });
  if (!s.ok()) {
    cache_->Unreserve(reserved);
    // Bytes not recorded give their space back.
    for (uint64_t i : blocks) {
      ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(rec->BlockBegin(i)),
                  static_cast<off_t>(rec->BlockEnd(i) - rec->BlockBegin(i)));
    }
    return;
  }
  cache_->counters_.filled_bytes.fetch_add(added, std::memory_order_relaxed);
  if (complete) VerifiedComplete();  // at completion, while the bytes are in the page cache
}

bool CachedFile::VerifyAll(CacheRecord& rec) {
  struct stat before {};
  if (::fstat(fd_, &before) != 0 || static_cast<uint64_t>(before.st_size) != rec.size) {
    return false;
  }
  std::vector<std::byte> buf(rec.block_size);
  std::vector<uint64_t> bad;
  for (uint64_t i = 0; i < rec.Blocks(); ++i) {
    const uint64_t b = rec.BlockBegin(i), e = rec.BlockEnd(i);
    if (!PreadAll(fd_, buf.data(), e - b, b) ||
        s3::Crc32c(std::span(buf.data(), e - b)) != rec.crc[i]) {
      bad.push_back(i);
    }
  }
  if (!bad.empty()) {
    spdlog::warn("data cache {}: {} block(s) failed their checksum; dropped", path_, bad.size());
    cache_->counters_.bad_blocks.fetch_add(bad.size(), std::memory_order_relaxed);
    cache_->DropBlocks(rkey_, file_, bad);
    return false;
  }
  // The stamp is taken before reading: a write during the check changes it.
  const FileStamp stamp = StampOf(before);
  Status s = cache_->env_->Write([&](LmdbTxn& t) -> Status {
    auto v = t.Get(rkey_);
    if (!v.ok()) return v.error();
    std::optional<CacheRecord> cur = *v ? DecodeRecord(**v) : std::nullopt;
    if (!cur || cur->file != file_ || !cur->Complete() || cur->crc != rec.crc) {
      return MakeError(ESTALE, "CacheChanged", "record changed while verifying");
    }
    cur->verified = stamp;
    return t.Put(rkey_, EncodeRecord(*cur));
  });
  if (s.ok()) cache_->counters_.verified_files.fetch_add(1, std::memory_order_relaxed);
  return s.ok();
}

bool CachedFile::VerifiedComplete() {
  auto rec = cache_->GetRecord(rkey_);
  if (!rec || rec->file != file_ || !rec->Complete()) return false;
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_nlink == 0) return false;
  if (rec->verified.ino != 0 && rec->verified == StampOf(st)) return true;
  return VerifyAll(*rec);
}

}  // namespace bucketfs::cache
