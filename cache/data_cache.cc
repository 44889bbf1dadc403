// DataCache: see data_cache.h.
#include "cache/data_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <unordered_set>
#include <vector>

#include "s3/crc32c.h"

namespace bucketfs::cache {
namespace {

constexpr size_t kMaxLmdbKey = 511;
constexpr std::string_view kVersionKey{"\x01version", 8};
constexpr std::string_view kTotalKey{"\x01total", 6};
constexpr std::string_view kRecordPrefix{"E", 1};
// A file younger than this may belong to a record another process has just
// committed but this one cannot see yet: it is not removed as unlisted.
constexpr int64_t kUnlistedGraceSeconds = 60;
// The last-use time is written at most this often per file (a write
// transaction per open would be wasteful).
constexpr int64_t kUseResolutionNs = 1'000'000'000;

std::string RandomName() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof(v), 0) != sizeof(v)) {
    v = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(::getpid()) << 32);
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t GetTotal(const LmdbTxn& t) {
  auto v = t.Get(kTotalKey);
  uint64_t total = 0;
  if (v.ok() && *v && (*v)->size() == sizeof(total)) std::memcpy(&total, (*v)->data(), 8);
  return total;
}

Status PutTotal(LmdbTxn& t, uint64_t total) {
  return t.Put(kTotalKey, std::string_view(reinterpret_cast<const char*>(&total), sizeof(total)));
}

FileStamp StampOf(const struct stat& st) {
  return FileStamp{static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                   st.st_mtim.tv_sec * 1'000'000'000ll + st.st_mtim.tv_nsec,
                   st.st_ctim.tv_sec * 1'000'000'000ll + st.st_ctim.tv_nsec};
}

bool PreadAll(int fd, std::byte* out, size_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pread(fd, out, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

bool PwriteAll(int fd, const std::byte* in, size_t len, uint64_t offset) {
  while (len > 0) {
    const ssize_t n = ::pwrite(fd, in, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    in += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

void RemoveDirFiles(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ::unlink((dir + "/" + e->d_name).c_str());
  }
  ::closedir(d);
}

Status MakeDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return MakeError(errno, "CacheDir", "cannot create " + dir + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<std::unique_ptr<LmdbEnv>> OpenIndex(const std::string& dir) {
  LmdbOptions lo;
  lo.no_sync = true;  // every block is checked before use; a lost commit is a refetch
  auto env = LmdbEnv::Open(dir, lo);
  if (!env.ok()) return env.error();
  std::optional<std::string> version;
  Status read = (*env)->Read([&](LmdbTxn& t) -> Status {
    auto v = t.Get(kVersionKey);
    if (!v.ok()) return v.error();
    version = std::move(*v);
    return Status::Ok();
  });
  if (!read.ok()) return read.error();
  if (version && *version != kDataCacheFormat) {
    return MakeError(EUCLEAN, "CacheVersion", "format '" + *version + "'");
  }
  if (!version) {
    Status s = (*env)->Write([](LmdbTxn& t) { return t.Put(kVersionKey, kDataCacheFormat); });
    if (!s.ok()) return s.error();
  }
  return std::move(*env);
}

}  // namespace

// ---- CachedFile

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

// ---- DataCache

DataCache::DataCache(DataCacheOptions options, std::unique_ptr<LmdbEnv> env)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock
                            : [] {
                                return static_cast<int64_t>(
                                    std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
                              }),
      objects_dir_(options_.dir + "/objects"),
      env_(std::move(env)) {}

DataCache::~DataCache() = default;

Result<std::shared_ptr<DataCache>> DataCache::Open(DataCacheOptions options) {
  if (options.max_bytes == 0 || options.block_size == 0) {
    return MakeError(EINVAL, "CacheOptions", "size limit and block size must be above 0");
  }
  if (Status s = MakeDir(options.dir); !s.ok()) return s.error();
  if (Status s = MakeDir(options.dir + "/objects"); !s.ok()) return s.error();
  const std::string index = options.dir + "/index";
  auto env = OpenIndex(index);
  if (!env.ok() && IsCorruption(env.error())) {
    spdlog::warn("data cache {}: {}; starting it anew", options.dir, env.error().message);
    ::unlink((index + "/data.mdb").c_str());
    ::unlink((index + "/lock.mdb").c_str());
    RemoveDirFiles(options.dir + "/objects");
    env = OpenIndex(index);
  }
  if (!env.ok()) return env.error();
  std::shared_ptr<DataCache> cache(new DataCache(std::move(options), std::move(*env)));
  if (Status s = cache->Recount(); !s.ok()) return s.error();
  cache->RemoveUnlisted();
  return cache;
}

std::string DataCache::RecordKey(const s3::ObjectVersion& v) const {
  std::string k;
  k.reserve(4 + options_.scope.size() + v.bucket.size() + v.key.size() + v.etag.size());
  k += kRecordPrefix;
  k += options_.scope;
  k += '\0';
  k += v.bucket;
  k += '\0';
  k += v.key;
  k += '\0';
  k += v.etag;
  return k;
}

std::optional<CacheRecord> DataCache::GetRecord(const std::string& rkey) const {
  std::optional<CacheRecord> rec;
  Status s = env_->Read([&](LmdbTxn& t) -> Status {
    auto v = t.Get(rkey);
    if (!v.ok()) return v.error();
    if (*v) rec = DecodeRecord(**v);
    return Status::Ok();
  });
  if (!s.ok()) return std::nullopt;
  return rec;
}

uint64_t DataCache::TotalBytes() const {
  uint64_t total = 0;
  (void)env_->Read([&](LmdbTxn& t) {
    total = GetTotal(t);
    return Status::Ok();
  });
  return total;
}

Status DataCache::Recount() {
  return env_->Write([&](LmdbTxn& t) -> Status {
    uint64_t total = 0;
    std::vector<std::string> undecodable;
    Status s = t.ForEachPrefix(kRecordPrefix, [&](std::string_view k, std::string_view v) {
      auto rec = DecodeRecord(v);
      if (rec) {
        total += rec->PresentBytes();
      } else {
        undecodable.emplace_back(k);
      }
      return true;
    });
    if (!s.ok()) return s;
    for (const auto& k : undecodable) {
      if (Status d = t.Del(k); !d.ok()) return d;
    }
    return PutTotal(t, total);
  });
}

void DataCache::RemoveUnlisted() {
  std::unordered_set<std::string> listed;
  (void)env_->Read([&](LmdbTxn& t) {
    return t.ForEachPrefix(kRecordPrefix, [&](std::string_view, std::string_view v) {
      if (auto rec = DecodeRecord(v)) listed.insert(rec->file);
      return true;
    });
  });
  DIR* d = ::opendir(objects_dir_.c_str());
  if (d == nullptr) return;
  const int64_t now_s = ::time(nullptr);  // file times are real time, not the index clock
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.' || listed.count(e->d_name) != 0) continue;
    const std::string path = objects_dir_ + "/" + e->d_name;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && now_s - st.st_mtim.tv_sec > kUnlistedGraceSeconds) {
      ::unlink(path.c_str());
    }
  }
  ::closedir(d);
}

std::shared_ptr<CachedFile> DataCache::Acquire(const s3::ObjectVersion& v, bool create) {
  if (v.etag.empty() || v.size == 0) return nullptr;
  const std::string rkey = RecordKey(v);
  if (rkey.size() > kMaxLmdbKey) return nullptr;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::optional<CacheRecord> rec = GetRecord(rkey);
    if (!rec && !create) return nullptr;
    if (!rec || rec->size != v.size) {
      Status s = env_->Write([&](LmdbTxn& t) -> Status {
        auto cur = t.Get(rkey);
        if (!cur.ok()) return cur.error();
        if (*cur && (rec = DecodeRecord(**cur)) && rec->size == v.size) return Status::Ok();
        rec = NewRecord(RandomName(), v.size, options_.block_size, Now());
        return t.Put(rkey, EncodeRecord(*rec));
      });
      if (!s.ok()) {
        spdlog::debug("data cache: {}", s.error().ToString());
        return nullptr;
      }
    }
    const std::string path = objects_dir_ + "/" + rec->file;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    if (fd < 0) {
      if (!create) return nullptr;
      spdlog::debug("data cache: open {}: {}", path, std::strerror(errno));
      return nullptr;
    }
    auto file =
        std::shared_ptr<CachedFile>(new CachedFile(shared_from_this(), rkey, rec->file, path, fd));
    struct stat st {};
    if (::flock(fd, LOCK_SH) != 0 || ::fstat(fd, &st) != 0) return nullptr;
    if (st.st_nlink == 0) continue;  // evicted before we locked it: look again
    if (static_cast<uint64_t>(st.st_size) != v.size &&
        ::ftruncate(fd, static_cast<off_t>(v.size)) != 0) {
      return nullptr;
    }
    // The record must still name this file (another process may have evicted
    // and recreated it in between).
    auto now_rec = GetRecord(rkey);
    if (!now_rec || now_rec->file != rec->file) continue;
    const int64_t now = Now();
    if (now - now_rec->used_ns > kUseResolutionNs) {
      (void)env_->Write([&](LmdbTxn& t) -> Status {
        auto cur = t.Get(rkey);
        if (!cur.ok() || !*cur) return Status::Ok();
        auto r = DecodeRecord(**cur);
        if (!r || r->file != rec->file) return Status::Ok();
        r->used_ns = now;
        return t.Put(rkey, EncodeRecord(*r));
      });
    }
    return file;
  }
  return nullptr;
}

void DataCache::DropBlocks(const std::string& rkey, const std::string& file,
                           const std::vector<uint64_t>& blocks) {
  Status s = env_->Write([&](LmdbTxn& t) -> Status {
    auto v = t.Get(rkey);
    if (!v.ok()) return v.error();
    std::optional<CacheRecord> cur = *v ? DecodeRecord(**v) : std::nullopt;
    if (!cur || cur->file != file) return Status::Ok();
    uint64_t removed = 0;
    for (uint64_t i : blocks) {
      if (i >= cur->Blocks() || !cur->present[i]) continue;
      cur->present[i] = 0;
      removed += cur->BlockEnd(i) - cur->BlockBegin(i);
    }
    cur->verified = FileStamp{};
    if (Status p = t.Put(rkey, EncodeRecord(*cur)); !p.ok()) return p;
    const uint64_t total = GetTotal(t);
    return PutTotal(t, total > removed ? total - removed : 0);
  });
  if (!s.ok()) spdlog::warn("data cache: dropping bad blocks: {}", s.error().ToString());
}

bool DataCache::Reserve(uint64_t bytes) {
  if (LowOnSpace()) return false;
  bool reserved = false;
  Status s = env_->Write([&](LmdbTxn& t) -> Status {
    const uint64_t total = GetTotal(t);
    reserved = total + bytes <= options_.max_bytes;
    return reserved ? PutTotal(t, total + bytes) : Status::Ok();
  });
  return s.ok() && reserved;
}

void DataCache::Unreserve(uint64_t bytes) {
  (void)env_->Write([&](LmdbTxn& t) -> Status {
    const uint64_t total = GetTotal(t);
    return PutTotal(t, total > bytes ? total - bytes : 0);
  });
}

bool DataCache::LowOnSpace() const {
  if (options_.min_free_bytes == 0) return false;
  struct statvfs vfs {};
  if (::statvfs(objects_dir_.c_str(), &vfs) != 0) return false;
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize < options_.min_free_bytes;
}

uint64_t DataCache::EvictTo(uint64_t target) {
  MutexLock lock(evict_mu_);
  struct Candidate {
    int64_t used_ns;
    std::string rkey;
    std::string file;
  };
  std::vector<Candidate> candidates;
  (void)env_->Read([&](LmdbTxn& t) {
    return t.ForEachPrefix(kRecordPrefix, [&](std::string_view k, std::string_view v) {
      if (auto rec = DecodeRecord(v))
        candidates.push_back({rec->used_ns, std::string(k), rec->file});
      return true;
    });
  });
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.used_ns < b.used_ns; });
  uint64_t freed = 0;
  for (const Candidate& c : candidates) {
    if (TotalBytes() <= target) break;
    const std::string path = objects_dir_ + "/" + c.file;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);  // pinned by a reader, a fill or a passthrough open
      continue;
    }
    uint64_t bytes = 0;
    bool removed = false;
    Status s = env_->Write([&](LmdbTxn& t) -> Status {
      auto v = t.Get(c.rkey);
      if (!v.ok()) return v.error();
      std::optional<CacheRecord> cur = *v ? DecodeRecord(**v) : std::nullopt;
      if (!cur || cur->file != c.file) return Status::Ok();
      bytes = cur->PresentBytes();
      if (Status d = t.Del(c.rkey); !d.ok()) return d;
      removed = true;
      const uint64_t total = GetTotal(t);
      return PutTotal(t, total > bytes ? total - bytes : 0);
    });
    if (s.ok() && removed) {
      ::unlink(path.c_str());  // still under the exclusive lock
      freed += bytes;
      counters_.evicted_files.fetch_add(1, std::memory_order_relaxed);
      counters_.evicted_bytes.fetch_add(bytes, std::memory_order_relaxed);
    }
    if (fd >= 0) ::close(fd);
  }
  return freed;
}

DataCacheStats DataCache::stats() const {
  const auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  DataCacheStats s;
  s.hits = ld(counters_.hits);
  s.hit_bytes = ld(counters_.hit_bytes);
  s.misses = ld(counters_.misses);
  s.filled_bytes = ld(counters_.filled_bytes);
  s.refused_fills = ld(counters_.refused_fills);
  s.bad_blocks = ld(counters_.bad_blocks);
  s.evicted_files = ld(counters_.evicted_files);
  s.evicted_bytes = ld(counters_.evicted_bytes);
  s.verified_files = ld(counters_.verified_files);
  return s;
}

}  // namespace bucketfs::cache
