// LmdbEnv: see lmdb_env.h.
#include "cache/lmdb_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace bucketfs::cache {
namespace {

MDB_val Val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};  // LMDB does not write through it
}

std::string_view View(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

}  // namespace

Error LmdbError(int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + mdb_strerror(rc);
  switch (rc) {
    case MDB_CORRUPTED:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_PAGE_NOTFOUND:
    case MDB_BAD_TXN:
      return MakeError(EUCLEAN, "CacheCorrupt", std::move(message));
    case MDB_MAP_FULL:
      return MakeError(ENOSPC, "CacheFull", std::move(message));
    case MDB_READERS_FULL:
    case MDB_TXN_FULL:
      return MakeError(EAGAIN, "CacheBusy", std::move(message));
    default:
      return MakeError(rc > 0 ? rc : EIO, "Cache", std::move(message));
  }
}

bool IsCorruption(const Error& e) { return e.errno_value == EUCLEAN; }

Result<std::optional<std::string>> LmdbTxn::Get(std::string_view key) const {
  MDB_val k = Val(key), v{};
  int rc = mdb_get(txn_, dbi_, &k, &v);
  if (rc == MDB_NOTFOUND) return std::optional<std::string>();
  if (rc != 0) return LmdbError(rc, "mdb_get");
  return std::optional<std::string>(std::string(View(v)));
}

Status LmdbTxn::Put(std::string_view key, std::string_view value) {
  MDB_val k = Val(key), v = Val(value);
  int rc = mdb_put(txn_, dbi_, &k, &v, 0);
  if (rc != 0) return LmdbError(rc, "mdb_put");
  return Status::Ok();
}

Status LmdbTxn::Del(std::string_view key) {
  MDB_val k = Val(key);
  int rc = mdb_del(txn_, dbi_, &k, nullptr);
  // MDB_BAD_VALSIZE: a key too long to have been stored.
  if (rc != 0 && rc != MDB_NOTFOUND && rc != MDB_BAD_VALSIZE) return LmdbError(rc, "mdb_del");
  return Status::Ok();
}

Result<size_t> LmdbTxn::DelPrefix(std::string_view prefix) {
  MDB_cursor* raw = nullptr;
  int rc = mdb_cursor_open(txn_, dbi_, &raw);
  if (rc != 0) return LmdbError(rc, "mdb_cursor_open");
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> cursor(raw, mdb_cursor_close);
  MDB_val k = Val(prefix), v{};
  size_t n = 0;
  rc = mdb_cursor_get(raw, &k, &v, MDB_SET_RANGE);
  if (rc == MDB_BAD_VALSIZE) return size_t{0};  // a prefix too long for any stored key
  while (rc == 0 && View(k).substr(0, prefix.size()) == prefix) {
    rc = mdb_cursor_del(raw, 0);
    if (rc != 0) return LmdbError(rc, "mdb_cursor_del");
    ++n;
    // After a delete the cursor sits on the next item: GET_CURRENT reads it.
    rc = mdb_cursor_get(raw, &k, &v, MDB_GET_CURRENT);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return LmdbError(rc, "mdb_cursor_get");
  return n;
}

Status LmdbTxn::ForEachPrefix(
    std::string_view prefix,
    const std::function<bool(std::string_view, std::string_view)>& fn) const {
  MDB_cursor* raw = nullptr;
  int rc = mdb_cursor_open(txn_, dbi_, &raw);
  if (rc != 0) return LmdbError(rc, "mdb_cursor_open");
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> cursor(raw, mdb_cursor_close);
  MDB_val k = Val(prefix), v{};
  rc = mdb_cursor_get(raw, &k, &v, MDB_SET_RANGE);
  if (rc == MDB_BAD_VALSIZE) return Status::Ok();
  while (rc == 0 && View(k).substr(0, prefix.size()) == prefix) {
    if (!fn(View(k), View(v))) return Status::Ok();
    rc = mdb_cursor_get(raw, &k, &v, MDB_NEXT);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return LmdbError(rc, "mdb_cursor_get");
  return Status::Ok();
}

LmdbEnv::LmdbEnv(std::unique_ptr<MDB_env, EnvCloser> env, MDB_dbi dbi, std::string dir,
                 LmdbOptions options)
    : env_(std::move(env)), dbi_(dbi), dir_(std::move(dir)), options_(options) {}

LmdbEnv::~LmdbEnv() = default;

Result<std::unique_ptr<LmdbEnv>> LmdbEnv::Open(const std::string& dir, const LmdbOptions& options) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return MakeError(errno, "CacheDir", "cannot create " + dir + ": " + std::strerror(errno));
  }
  MDB_env* raw = nullptr;
  int rc = mdb_env_create(&raw);
  if (rc != 0) return LmdbError(rc, "mdb_env_create");
  std::unique_ptr<MDB_env, EnvCloser> env(raw);
  if ((rc = mdb_env_set_mapsize(raw, options.initial_map_size)) != 0 ||
      (rc = mdb_env_set_maxreaders(raw, options.max_readers)) != 0) {
    return LmdbError(rc, "mdb_env_set");
  }
  // MDB_NOTLS: read transactions are not bound to threads. MDB_NOSYNC is not
  // used: a cache may lose its last commits in a crash but not its integrity
  // (MDB_NOMETASYNC keeps one fsync per commit and is crash-safe).
  rc = mdb_env_open(raw, dir.c_str(), MDB_NOTLS | (options.no_sync ? MDB_NOSYNC : MDB_NOMETASYNC),
                    0600);
  if (rc != 0) return LmdbError(rc, "mdb_env_open " + dir);
  if (Status s = CheckFileSize(raw, dir); !s.ok()) return s.error();
  MDB_txn* txn = nullptr;
  if ((rc = mdb_txn_begin(raw, nullptr, 0, &txn)) != 0) return LmdbError(rc, "mdb_txn_begin");
  MDB_dbi dbi = 0;
  if ((rc = mdb_dbi_open(txn, nullptr, 0, &dbi)) != 0) {
    mdb_txn_abort(txn);
    return LmdbError(rc, "mdb_dbi_open");
  }
  if ((rc = mdb_txn_commit(txn)) != 0) return LmdbError(rc, "mdb_txn_commit");
  std::unique_ptr<LmdbEnv> self(new LmdbEnv(std::move(env), dbi, dir, options));
  return self;
}

size_t LmdbEnv::map_size() const {
  MDB_envinfo info{};
  mdb_env_info(env_.get(), &info);
  return info.me_mapsize;
}

Status LmdbEnv::CheckFileSize(MDB_env* env, const std::string& dir) {
  MDB_envinfo info{};
  MDB_stat st{};
  int rc = mdb_env_info(env, &info);
  if (rc == 0) rc = mdb_env_stat(env, &st);
  if (rc != 0) return LmdbError(rc, "mdb_env_info");
  struct stat file {};
  const std::string path = dir + "/data.mdb";
  if (::stat(path.c_str(), &file) != 0) return Status::Ok();  // not written yet
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * st.ms_psize;
  if (static_cast<uint64_t>(file.st_size) < needed) {
    return MakeError(EUCLEAN, "CacheCorrupt",
                     path + " is truncated: " + std::to_string(file.st_size) +
                         " bytes, its pages need " + std::to_string(needed));
  }
  return Status::Ok();
}

Status LmdbEnv::Grow() {
  WriterMutexLock lock(resize_mu_);
  const size_t current = map_size();
  if (current >= options_.max_map_size) return LmdbError(MDB_MAP_FULL, "metadata cache");
  int rc = mdb_env_set_mapsize(env_.get(), std::min(current * 2, options_.max_map_size));
  if (rc != 0) return LmdbError(rc, "mdb_env_set_mapsize");
  return Status::Ok();
}

Status LmdbEnv::Read(const std::function<Status(LmdbTxn&)>& fn) {
  for (int attempt = 0;; ++attempt) {
    {
      ReaderMutexLock lock(resize_mu_);
      MDB_txn* raw = nullptr;
      int rc = mdb_txn_begin(env_.get(), nullptr, MDB_RDONLY, &raw);
      if (rc == 0) {
        TxnPtr txn(raw);  // read transactions are aborted, never committed
        LmdbTxn t(raw, dbi_);
        return fn(t);
      }
      if (rc != MDB_MAP_RESIZED || attempt > 3) return LmdbError(rc, "mdb_txn_begin");
    }
    WriterMutexLock lock(resize_mu_);
    mdb_env_set_mapsize(env_.get(), 0);  // adopt the size another process set
  }
}

Status LmdbEnv::Write(const std::function<Status(LmdbTxn&)>& fn) {
  for (int attempt = 0;; ++attempt) {
    int rc = 0;
    {
      ReaderMutexLock lock(resize_mu_);
      MDB_txn* raw = nullptr;
      rc = mdb_txn_begin(env_.get(), nullptr, 0, &raw);
      if (rc == 0) {
        TxnPtr txn(raw);
        LmdbTxn t(raw, dbi_);
        Status s = fn(t);
        if (!s.ok()) {
          if (s.error().errno_value != ENOSPC || attempt > 8) return s;
          rc = MDB_MAP_FULL;
        } else {
          rc = mdb_txn_commit(txn.release());
          if (rc == 0) return Status::Ok();
        }
      }
      if ((rc != MDB_MAP_RESIZED && rc != MDB_MAP_FULL) || attempt > 8) {
        return LmdbError(rc, "write transaction");
      }
    }
    if (rc == MDB_MAP_FULL) {
      if (Status s = Grow(); !s.ok()) return s;
    } else {
      WriterMutexLock lock(resize_mu_);
      mdb_env_set_mapsize(env_.get(), 0);
    }
  }
}

Result<std::unique_ptr<LmdbEnv>> OpenVersioned(const std::string& dir, const LmdbOptions& options,
                                               std::string_view version_key,
                                               std::string_view format) {
  auto env = LmdbEnv::Open(dir, options);
  if (!env.ok()) return env.error();
  std::optional<std::string> version;
  Status read = (*env)->Read([&](LmdbTxn& t) -> Status {
    auto v = t.Get(version_key);
    if (!v.ok()) return v.error();
    version = std::move(*v);
    return Status::Ok();
  });
  if (!read.ok()) return read.error();
  if (version && *version != format) {
    return MakeError(EUCLEAN, "CacheVersion",
                     "format '" + *version + "', expected '" + std::string(format) + "'");
  }
  if (!version) {
    Status s = (*env)->Write([&](LmdbTxn& t) { return t.Put(version_key, format); });
    if (!s.ok()) return s.error();
  }
  return std::move(*env);
}

void RemoveEnvFiles(const std::string& dir) {
  ::unlink((dir + "/data.mdb").c_str());
  ::unlink((dir + "/lock.mdb").c_str());
}

}  // namespace bucketfs::cache
