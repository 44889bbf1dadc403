// LmdbEnv: a small RAII layer over one LMDB environment (one unnamed
// database), so that nothing else in bucketfs touches MDB_env, MDB_txn or
// MDB_cursor directly, and every LMDB return code becomes an Error with an
// errno in exactly one function (LmdbError).
//
// Parts:
// - LmdbEnv::Open: creates the directory (0700) and the environment with
//   MDB_NOTLS (FUSE worker threads hand work around; read transactions are
//   not tied to a thread) and a map size that grows on MDB_MAP_FULL.
// - Read / Write: run a callback inside a transaction. Write commits when the
//   callback returns Ok and aborts otherwise; on MDB_MAP_FULL it doubles the
//   map and runs the callback again. MDB_MAP_RESIZED (another process grew
//   the file) adopts the new size and retries.
// - Txn: Get/Put/Del and a prefix scan, used inside those callbacks.
//
// Multi-process safety is LMDB's own (lock file + reader table). Within one
// process, one LmdbEnv per directory: LMDB forbids opening the same
// environment twice in a process.
//
// Thread-safe: a shared_mutex lets many transactions run at once and gives
// the map resize (which LMDB requires to run with no transaction open in this
// process) exclusive access.
#pragma once

#include <lmdb.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "s3/result.h"

namespace bucketfs::cache {

// Converts an LMDB (or errno) return code into an Error. Corruption and
// version codes map to EUCLEAN so callers can tell "rebuild" from "I/O".
Error LmdbError(int rc, std::string_view what);
// True for the codes that mean "this file cannot be trusted": rebuild it.
bool IsCorruption(const Error& e);

class LmdbTxn {
 public:
  explicit LmdbTxn(MDB_txn* txn, MDB_dbi dbi) : txn_(txn), dbi_(dbi) {}

  // Value of `key`, or nullopt when absent. The view is valid until the
  // transaction ends; Get copies it.
  Result<std::optional<std::string>> Get(std::string_view key) const;
  Status Put(std::string_view key, std::string_view value);
  // Deleting an absent key is not an error.
  Status Del(std::string_view key);
  // Deletes every key starting with `prefix`; returns how many.
  Result<size_t> DelPrefix(std::string_view prefix);
  // Calls `fn(key, value)` for every key starting with `prefix`, in key
  // order, until it returns false. The views are valid during the call only.
  Status ForEachPrefix(std::string_view prefix,
                       const std::function<bool(std::string_view, std::string_view)>& fn) const;

 private:
  MDB_txn* txn_;
  MDB_dbi dbi_;
};

struct LmdbOptions;
class LmdbEnv;

// Opens (creating) the environment in `dir` and checks that its record
// `version_key` says `format`, writing it into a new one. A corrupt,
// truncated or other-format environment is EUCLEAN (IsCorruption): callers
// remove it (RemoveEnvFiles) and start anew.
Result<std::unique_ptr<LmdbEnv>> OpenVersioned(const std::string& dir, const LmdbOptions& options,
                                               std::string_view version_key,
                                               std::string_view format);
// Removes the environment's files in `dir`.
void RemoveEnvFiles(const std::string& dir);

struct LmdbOptions {
  size_t initial_map_size = 1ull << 30;  // 1 GiB of address space, not disk
  size_t max_map_size = 64ull << 30;     // growth stops here (MDB_MAP_FULL -> ENOSPC)
  unsigned max_readers = 512;
  // MDB_NOSYNC: commits are not flushed to disk (a process that dies loses
  // nothing; a machine crash may lose or damage the file, which callers
  // must then rebuild). For records that are re-checked anyway.
  bool no_sync = false;
};

class LmdbEnv {
 public:
  // Opens (creating when missing) the environment in directory `dir`.
  static Result<std::unique_ptr<LmdbEnv>> Open(const std::string& dir, const LmdbOptions& options);
  ~LmdbEnv();
  LmdbEnv(const LmdbEnv&) = delete;
  LmdbEnv& operator=(const LmdbEnv&) = delete;

  Status Read(const std::function<Status(LmdbTxn&)>& fn);
  Status Write(const std::function<Status(LmdbTxn&)>& fn);

  size_t map_size() const;

 private:
  struct EnvCloser {
    void operator()(MDB_env* env) const { mdb_env_close(env); }
  };
  struct TxnAborter {
    void operator()(MDB_txn* txn) const { mdb_txn_abort(txn); }
  };
  using TxnPtr = std::unique_ptr<MDB_txn, TxnAborter>;

  LmdbEnv(std::unique_ptr<MDB_env, EnvCloser> env, MDB_dbi dbi, std::string dir,
          LmdbOptions options);
  // Checks that the data file holds every page the meta page claims (a
  // truncated file would otherwise fault on first access).
  static Status CheckFileSize(MDB_env* env, const std::string& dir);
  Status Grow() EXCLUDES(resize_mu_);

  std::unique_ptr<MDB_env, EnvCloser> env_;
  const MDB_dbi dbi_;
  const std::string dir_;
  const LmdbOptions options_;
  // Shared by every transaction; held exclusively to change the map size.
  mutable SharedMutex resize_mu_;
};

}  // namespace bucketfs::cache
