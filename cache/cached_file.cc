// CachedFile: see data_cache.h.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "cache/data_cache.h"
#include "cache/data_cache_internal.h"
#include "s3/crc32c.h"

namespace bucketfs::cache {

using namespace data_cache_internal;  // NOLINT(google-build-using-namespace)

namespace {

// Fills and the check of a completed file bypass the page cache (O_DIRECT)
// where the file system allows it: the reader's pages hold these bytes
// already, and copying them into the page cache a second time cost more CPU
// than the rest of the fill.
uint64_t RoundUpToDirect(uint64_t n) {
  return (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
}

// A descriptor closed when it goes out of scope; -1 when there is none.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  const int fd_;
};

// `len` bytes at `offset` through an O_DIRECT descriptor into an aligned
// buffer of RoundUpToDirect(len) bytes: at the end of the file the read may
// stop short of the rounded length, never of `len`.
bool PreadDirect(int fd, std::byte* out, uint64_t len, uint64_t offset) {
  return PreadAtLeast(fd, out, len, RoundUpToDirect(len), offset);
}

// Which ranges of a file the page cache holds (mincore over a read-only
// mapping, which reads nothing). A block it holds, e.g. of a file the mount
// just wrote, is checked there: an O_DIRECT read would first write it back
// if dirty, then read the disk.
class Residency {
 public:
  Residency(int fd, uint64_t size) : size_(size) {
    if (size_ > 0) map_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  }
  ~Residency() {
    if (map_ != MAP_FAILED) ::munmap(map_, size_);
  }
  Residency(const Residency&) = delete;
  Residency& operator=(const Residency&) = delete;

  bool Holds(uint64_t offset, uint64_t len) {
    if (map_ == MAP_FAILED || len == 0) return false;
    const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t first = offset / page * page;
    pages_.resize((offset + len - first + page - 1) / page);
    if (::mincore(static_cast<char*>(map_) + first, offset + len - first, pages_.data()) != 0) {
      return false;
    }
    return std::all_of(pages_.begin(), pages_.end(), [](unsigned char p) { return (p & 1) != 0; });
  }

 private:
  const uint64_t size_;
  void* map_ = MAP_FAILED;
  std::vector<unsigned char> pages_;
};

}  // namespace

int CachedFile::OpenDirect(int flags) const {
  if (cache_->direct_io_refused_.load(std::memory_order_relaxed)) return -1;
  const int fd = ::open(path_.c_str(), flags | O_DIRECT | O_CLOEXEC);
  if (fd < 0 && errno == EINVAL && !cache_->direct_io_refused_.exchange(true)) {
    spdlog::info("data cache {}: the file system refuses O_DIRECT; fills go through the page cache",
                 cache_->objects_dir());
  }
  return fd;
}

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

CachedFile::BlockSums CachedFile::CopyForFill(uint64_t offset, std::span<const std::byte> src,
                                              std::span<std::byte> dst) const {
  BlockSums sums;
  auto rec = cache_->GetRecord(rkey_);
  const uint64_t end = offset + src.size();
  if (!rec || rec->file != file_ || rec->block_size == 0 || end > rec->size) {
    if (!src.empty()) std::memcpy(dst.data(), src.data(), src.size());
    return sums;
  }
  sums.block_size = rec->block_size;
  const auto inside = rec->BlocksInside(offset, end);
  sums.first_block = inside.first;
  uint64_t at = offset;  // copied up to here
  for (uint64_t i = inside.first; i < inside.last; ++i) {
    const uint64_t b = rec->BlockBegin(i), e = rec->BlockEnd(i);
    if (b > at) std::memcpy(dst.data() + (at - offset), src.data() + (at - offset), b - at);
    sums.crcs.push_back(
        s3::CopyCrc32c(dst.subspan(b - offset, e - b), src.subspan(b - offset, e - b)));
    at = e;
  }
  if (end > at) std::memcpy(dst.data() + (at - offset), src.data() + (at - offset), end - at);
  return sums;
}

void CachedFile::Fill(uint64_t offset, std::span<const std::byte> data, const BlockSums* sums) {
  auto rec = cache_->GetRecord(rkey_);
  if (!rec || rec->file != file_ || data.empty() || offset + data.size() > rec->size) return;
  const uint64_t end = offset + data.size();
  const uint64_t bs = rec->block_size;
  std::vector<uint64_t> blocks;  // absent blocks wholly inside the data
  const auto inside = rec->BlocksInside(offset, end);
  for (uint64_t i = inside.first; i < inside.last; ++i) {
    if (!rec->present[i]) blocks.push_back(i);
  }
  if (blocks.empty()) return;
  uint64_t reserved = 0;
  for (uint64_t i : blocks) reserved += rec->BlockEnd(i) - rec->BlockBegin(i);
  const uint64_t limit = cache_->limit();
  if (reserved > limit) return;
  // The space is reserved in the total before the bytes are written, so that
  // fills running at once in any process never take the cache past its limit.
  if (!cache_->ReserveMakingRoom(reserved, limit)) {
    cache_->counters_.refused_fills.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::vector<uint32_t> crcs;
  const ScopedFd direct(OpenDirect(O_WRONLY));
  for (uint64_t i : blocks) {
    const uint64_t b = rec->BlockBegin(i), e = rec->BlockEnd(i);
    const std::byte* src = data.data() + (b - offset);
    // A block that is not aligned (the object's last, or bytes at an odd
    // place in memory) goes through the page cache, which keeps both coherent.
    const int fd = direct.get() >= 0 && DirectAligned(src, b, e - b) ? direct.get() : fd_;
    if (!PwriteAll(fd, src, e - b, b)) {
      spdlog::warn("data cache {}: write failed: {}", path_, std::strerror(errno));
      cache_->Unreserve(reserved);
      return;
    }
    const bool summed = sums != nullptr && sums->block_size == bs && i >= sums->first_block &&
                        i - sums->first_block < sums->crcs.size();
    crcs.push_back(summed ? sums->crcs[i - sums->first_block] : s3::Crc32c(std::span(src, e - b)));
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
  if (complete) VerifiedComplete();  // at completion, while the disk may still cache them
}

bool CachedFile::VerifyAll(CacheRecord& rec) {
  struct stat before {};
  if (::fstat(fd_, &before) != 0 || static_cast<uint64_t>(before.st_size) != rec.size) {
    return false;
  }
  // Read without filling the page cache where possible: the kernel reads
  // the file again when a reader asks, maybe long after.
  const ScopedFd direct(OpenDirect(O_RDONLY));
  Residency in_memory(fd_, rec.size);
  const uint64_t buf_size = RoundUpToDirect(rec.block_size);
  const std::unique_ptr<std::byte, decltype(&std::free)> buf(
      static_cast<std::byte*>(std::aligned_alloc(kDirectAlign, buf_size)), &std::free);
  if (buf == nullptr) return false;
  std::vector<uint64_t> bad;
  for (uint64_t i = 0; i < rec.Blocks(); ++i) {
    const uint64_t b = rec.BlockBegin(i), e = rec.BlockEnd(i);
    const bool read = direct.get() >= 0 && b % kDirectAlign == 0 && !in_memory.Holds(b, e - b)
                          ? PreadDirect(direct.get(), buf.get(), e - b, b)
                          : PreadAll(fd_, buf.get(), e - b, b);
    if (!read || s3::Crc32c(std::span(buf.get(), e - b)) != rec.crc[i]) bad.push_back(i);
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
