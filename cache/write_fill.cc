// WriteFill: see write_fill.h.
#include "cache/write_fill.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cache/data_cache_internal.h"
#include "s3/crc32c.h"

namespace bucketfs::cache {

using namespace data_cache_internal;  // NOLINT(google-build-using-namespace)

WriteFill::WriteFill(std::shared_ptr<DataCache> cache) : cache_(std::move(cache)) {}

WriteFill::~WriteFill() {
  MutexLock lock(mu_);
  if (!published_) Discard();
}

void WriteFill::Part(int part, uint64_t gen, uint64_t offset, std::span<const std::byte> data) {
  MutexLock lock(mu_);
  if (data.empty() || published_ || !Ready()) return;
  auto latest = part_gen_.find(part);
  if (latest != part_gen_.end() && latest->second > gen) return;  // a newer send came first
  part_gen_[part] = gen;
  uint64_t& reserved = part_reserved_[part];
  if (data.size() > reserved) {
    if (!ReserveSpace(data.size() - reserved)) {
      Abandon("the cache has no room for it");
      return;
    }
    reserved = data.size();
  }
  if (!PwriteAll(fd_, data.data(), data.size(), offset)) {
    Abandon(std::strerror(errno));
    return;
  }
  // Sums of the blocks these bytes hold whole, or up to their end (the
  // object's last block, if the object ends there: Publish checks).
  const uint64_t bs = cache_->options_.block_size;
  const uint64_t end = offset + data.size();
  for (uint64_t i = (offset + bs - 1) / bs; i * bs < end; ++i) {
    const uint64_t b = i * bs, e = std::min(b + bs, end);
    blocks_[i] = BlockSum{s3::Crc32c(data.subspan(b - offset, e - b)), e, part, gen};
  }
}

bool WriteFill::Publish(const s3::ObjectVersion& v) {
  MutexLock lock(mu_);
  if (published_ || failed_ || fd_ < 0 || v.etag.empty() || v.size == 0) return false;
  CacheRecord rec = NewRecord(file_, v.size, cache_->options_.block_size, cache_->Now());
  uint64_t present = 0;
  for (const auto& [i, sum] : blocks_) {
    if (i >= rec.Blocks() || sum.end != rec.BlockEnd(i) || part_gen_[sum.part] != sum.gen) {
      continue;
    }
    rec.present[i] = 1;
    rec.crc[i] = sum.crc;
    present += rec.BlockEnd(i) - rec.BlockBegin(i);
  }
  struct stat st {};
  // The file must still be there (an idle one can be removed as unlisted)
  // and look fresh to every process's unlisted check until it is recorded.
  if (present == 0 || ::ftruncate(fd_, static_cast<off_t>(v.size)) != 0 ||
      ::futimens(fd_, nullptr) != 0 || ::fstat(fd_, &st) != 0 || st.st_nlink == 0) {
    return false;
  }
  const std::string rkey = cache_->RecordKey(v);
  if (rkey.size() > kMaxRecordKey) return false;
  bool recorded = false;
  const uint64_t reserved = reserved_;  // the lambda runs inside Write, under mu_ still
  Status s = cache_->env_->Write([&](LmdbTxn& t) -> Status {
    recorded = false;
    auto cur = t.Get(rkey);
    if (!cur.ok()) return cur.error();
    const uint64_t total = GetTotal(t);
    if (*cur && DecodeRecord(**cur)) {
      // Another process (or an earlier write of the same bytes) has it.
      return PutTotal(t, total > reserved ? total - reserved : 0);
    }
    if (Status p = t.Put(rkey, EncodeRecord(rec)); !p.ok()) return p;
    recorded = true;
    return PutTotal(t, total - std::min(total, reserved) + present);
  });
  if (!s.ok()) {
    spdlog::warn("data cache: recording written s3://{}/{}: {}", v.bucket, v.key,
                 s.error().ToString());
    return false;  // the destructor gives the reservation back
  }
  reserved_ = 0;  // settled in the total either way
  if (!recorded) return false;
  published_ = true;
  cache_->counters_.filled_bytes.fetch_add(present, std::memory_order_relaxed);
  ::close(fd_);
  fd_ = -1;
  return true;
}

bool WriteFill::Ready() {
  if (failed_) return false;
  if (fd_ >= 0) return true;
  file_ = RandomName();
  const std::string path = cache_->objects_dir() + "/" + file_;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    spdlog::debug("data cache: create {}: {}", path, std::strerror(errno));
    failed_ = true;
    return false;
  }
  return true;
}

bool WriteFill::ReserveSpace(uint64_t bytes) {
  const uint64_t limit = cache_->limit();
  if (reserved_ + bytes > limit) return false;
  if (!cache_->ReserveMakingRoom(bytes, limit)) return false;
  reserved_ += bytes;
  return true;
}

void WriteFill::Abandon(const char* why) {
  spdlog::debug("data cache: not caching an object being written: {}", why);
  Discard();
  failed_ = true;
}

void WriteFill::Discard() {
  if (fd_ >= 0) {
    ::unlink((cache_->objects_dir() + "/" + file_).c_str());
    ::close(fd_);
    fd_ = -1;
  }
  if (reserved_ > 0) cache_->Unreserve(reserved_);
  reserved_ = 0;
  blocks_.clear();
}

}  // namespace bucketfs::cache
