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

#include "cache/data_cache_internal.h"

namespace bucketfs::cache {

using namespace data_cache_internal;  // NOLINT(google-build-using-namespace)

namespace {

constexpr std::string_view kVersionKey{"\x01version", 8};
constexpr std::string_view kRecordPrefix{"E", 1};
// A file younger than this may belong to a record another process has just
// committed but this one cannot see yet: it is not removed as unlisted.
constexpr int64_t kUnlistedGraceSeconds = 60;
// The last-use time is written at most this often per file (a write
// transaction per open would be wasteful).
constexpr int64_t kUseResolutionNs = 1'000'000'000;

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
  return OpenVersioned(dir, lo, kVersionKey, kDataCacheFormat);
}

}  // namespace

namespace data_cache_internal {

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

constexpr std::string_view kTotalKey{"\x01total", 6};
constexpr std::string_view kLimitKey{"\x01limit", 6};

namespace {

// The index's counters: one native-endian uint64 each (0 when absent).
uint64_t GetCounter(const LmdbTxn& t, std::string_view key) {
  auto v = t.Get(key);
  uint64_t n = 0;
  if (v.ok() && *v && (*v)->size() == sizeof(n)) std::memcpy(&n, (*v)->data(), sizeof(n));
  return n;
}

Status PutCounter(LmdbTxn& t, std::string_view key, uint64_t n) {
  return t.Put(key, std::string_view(reinterpret_cast<const char*>(&n), sizeof(n)));
}

}  // namespace

uint64_t GetTotal(const LmdbTxn& t) { return GetCounter(t, kTotalKey); }

Status PutTotal(LmdbTxn& t, uint64_t total) { return PutCounter(t, kTotalKey, total); }

FileStamp StampOf(const struct stat& st) {
  return FileStamp{static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                   st.st_mtim.tv_sec * 1'000'000'000ll + st.st_mtim.tv_nsec,
                   st.st_ctim.tv_sec * 1'000'000'000ll + st.st_ctim.tv_nsec};
}

bool PreadAtLeast(int fd, std::byte* out, uint64_t need, uint64_t ask, uint64_t offset) {
  uint64_t got = 0;
  while (got < need) {
    const ssize_t n = ::pread(fd, out + got, ask - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<uint64_t>(n);
  }
  return true;
}

bool PreadAll(int fd, std::byte* out, size_t len, uint64_t offset) {
  return PreadAtLeast(fd, out, len, len, offset);
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

uint64_t GetLimit(const LmdbTxn& t, uint64_t fallback) {
  const uint64_t limit = GetCounter(t, kLimitKey);
  return limit > 0 ? limit : fallback;
}

Status PutLimit(LmdbTxn& t, uint64_t limit) { return PutCounter(t, kLimitKey, limit); }

}  // namespace data_cache_internal

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
    RemoveEnvFiles(index);
    RemoveDirFiles(options.dir + "/objects");
    env = OpenIndex(index);
  }
  if (!env.ok()) return env.error();
  std::shared_ptr<DataCache> cache(new DataCache(std::move(options), std::move(*env)));
  if (Status s = cache->Recount(); !s.ok()) return s.error();
  cache->RemoveUnlisted();
  // One limit for every mount sharing the directory: this mount's, from now on.
  const uint64_t limit = cache->options_.max_bytes;
  uint64_t previous = 0;
  Status set = cache->env_->Write([&](LmdbTxn& t) -> Status {
    previous = GetLimit(t, 0);
    return PutLimit(t, limit);
  });
  if (!set.ok()) return set.error();
  if (previous != 0 && previous != limit) {
    spdlog::info("data cache {}: size limit now {} MiB for every mount sharing it (was {} MiB)",
                 cache->options_.dir, limit >> 20, previous >> 20);
  }
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
  if (rkey.size() > kMaxRecordKey) return nullptr;
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

uint64_t DataCache::limit() const {
  uint64_t limit = options_.max_bytes;
  (void)env_->Read([&](LmdbTxn& t) -> Status {
    limit = GetLimit(t, options_.max_bytes);
    return Status::Ok();
  });
  return limit;
}

bool DataCache::Reserve(uint64_t bytes) {
  if (LowOnSpace()) return false;
  bool reserved = false;
  Status s = env_->Write([&](LmdbTxn& t) -> Status {
    const uint64_t total = GetTotal(t);
    reserved = total + bytes <= GetLimit(t, options_.max_bytes);
    return reserved ? PutTotal(t, total + bytes) : Status::Ok();
  });
  return s.ok() && reserved;
}

bool DataCache::ReserveMakingRoom(uint64_t bytes, uint64_t limit) {
  if (Reserve(bytes)) return true;
  EvictTo(limit - std::max(bytes, limit / 10));
  return Reserve(bytes);
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
  s.skipped_fill_bytes = ld(counters_.skipped_fill_bytes);
  return s;
}

}  // namespace bucketfs::cache
