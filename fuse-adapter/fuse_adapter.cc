// The libfuse3 adapter: a few lines per callback (see fuse_adapter.h).
#include "fuse-adapter/fuse_adapter.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/uio.h>

#include <chrono>
#include <memory>
#include <vector>

#include "fuse-adapter/init_flags_io.h"
#include "fuse-adapter/passthrough.h"
#include "fuse/filesystem.h"

namespace bucketfs::fs {
namespace {

constexpr unsigned kMaxBackground = 64;

Filesystem& Fs(fuse_req_t req) { return *static_cast<SessionData*>(fuse_req_userdata(req))->fs; }
FuseObserver* Observer(fuse_req_t req) {
  return static_cast<SessionData*>(fuse_req_userdata(req))->observer;
}

// The operation each worker thread is answering now, so that error replies
// are counted by operation without passing it through every callback.
thread_local FuseOp current_op = FuseOp::kLookup;

void ReplyErrno(fuse_req_t req, int err, FuseOp op) {
  if (FuseObserver* o = Observer(req)) o->OnError(op, err);  // before the reply frees req
  fuse_reply_err(req, err);
}
void ReplyError(fuse_req_t req, const Error& e) { ReplyErrno(req, ErrnoOf(e), current_op); }
void ReplyStatus(fuse_req_t req, const Status& s) {
  if (!s.ok()) return ReplyError(req, s.error());
  fuse_reply_err(req, 0);
}

// Wraps a callback that answers before it returns: counts it and its time.
template <FuseOp kOp, auto kFn>
struct Timed;
template <FuseOp kOp, typename... Args, void (*kFn)(fuse_req_t, Args...)>
struct Timed<kOp, kFn> {
  static void Call(fuse_req_t req, Args... args) {
    FuseObserver* const o = Observer(req);  // req is gone once answered
    current_op = kOp;
    if (o == nullptr) return kFn(req, args...);
    const auto start = std::chrono::steady_clock::now();
    kFn(req, args...);
    o->OnOp(kOp, std::chrono::steady_clock::now() - start);
  }
};

fuse_entry_param ToParam(const Entry& e) {
  fuse_entry_param p{};
  p.ino = e.ino;
  p.attr = e.attr;
  p.attr_timeout = e.attr_timeout;
  p.entry_timeout = e.entry_timeout;
  return p;
}

// Replies with an entry; if the kernel never gets it (interrupted request),
// the lookup count it carried is returned at once.
void ReplyEntry(fuse_req_t req, const Entry& e) {
  fuse_entry_param p = ToParam(e);
  Filesystem& fs = Fs(req);
  if (fuse_reply_entry(req, &p) == -ENOENT) fs.Forget(e.ino, 1);
}

void Init(void* userdata, fuse_conn_info* conn) {
  const auto& session = *static_cast<SessionData*>(userdata);
  WantTransportSettings(conn);
  // READDIRPLUS on every batch (not the kernel's AUTO, which guesses per
  // directory): the daemon decides which entries carry attributes (auto).
  const bool plus = session.fs->config().readdirplus != FsConfig::ReaddirPlus::kOff;
  if (plus && (conn->capable & FUSE_CAP_READDIRPLUS)) conn->want |= FUSE_CAP_READDIRPLUS;
  conn->want &= ~(FUSE_CAP_READDIRPLUS_AUTO | (plus ? 0 : FUSE_CAP_READDIRPLUS));
  // The kernel keeps link targets in its page cache: following a link costs
  // no READLINK (and no GET) while its attributes stay valid.
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  // The kernel's INIT request was read before this runs; InitFlagsIo (see
  // fuse_session.cc) adds the flags libfuse leaves out to the reply libfuse
  // is about to send.
  const char* shared_mmap = "refused (no flag exchange)";
  if (session.init_io != nullptr) {
    shared_mmap = (session.init_io->offered() & kFuseDirectIoAllowMmap)
                      ? "allowed (FUSE_DIRECT_IO_ALLOW_MMAP)"
                      : "refused (the kernel does not offer FUSE_DIRECT_IO_ALLOW_MMAP)";
  }
  spdlog::debug("kernel FUSE {}.{}: capable {:#x}, want {:#x}; shared mmap of direct-I/O files {}",
                conn->proto_major, conn->proto_minor, conn->capable, conn->want, shared_mmap);
  const FsConfig& config = session.fs->config();
  if (!config.cache_dir.empty() && config.data_cache) {
    const bool offered =
        session.init_io != nullptr && (session.init_io->offered() & kFusePassthrough) != 0;
    if (!config.passthrough) {
      spdlog::info("read mode: served by the daemon (--no-passthrough)");
    } else if (session.passthrough != nullptr && offered) {
      spdlog::info(
          "read mode: FUSE passthrough for fully cached files (the kernel reads them from the "
          "cache), daemon-served reads otherwise");
    } else {
      spdlog::info("read mode: served by the daemon (the kernel does not offer FUSE passthrough)");
    }
  }
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  auto r = Fs(req).Lookup(parent, name, fuse_req_ctx(req)->pid);
  if (r.ok()) return ReplyEntry(req, *r);
  const double negative_ttl = Fs(req).config().negative_ttl;
  if (r.error().errno_value == ENOENT && negative_ttl > 0) {
    fuse_entry_param p{};  // ino 0: a cacheable "no such entry"
    p.entry_timeout = negative_ttl;
    fuse_reply_entry(req, &p);
    return;
  }
  ReplyError(req, r.error());
}

void Forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Fs(req).Forget(ino, nlookup);
  fuse_reply_none(req);
}

void ForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) Fs(req).Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) {
  auto r = Fs(req).GetAttr(ino);
  if (!r.ok()) return ReplyError(req, r.error());
  fuse_reply_attr(req, &*r, Fs(req).config().metadata_ttl);
}

void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
             fuse_file_info* /*fi*/) {
  SetAttrRequest s;
  if (to_set & FUSE_SET_ATTR_SIZE) s.size = static_cast<uint64_t>(attr->st_size);
  s.mode = to_set & FUSE_SET_ATTR_MODE;
  s.uid = to_set & FUSE_SET_ATTR_UID;
  s.gid = to_set & FUSE_SET_ATTR_GID;
  s.atime = to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW);
  s.mtime = to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW);
  s.mode_value = attr->st_mode;
  s.uid_value = attr->st_uid;
  s.gid_value = attr->st_gid;
  s.mtime_value = (to_set & FUSE_SET_ATTR_MTIME_NOW)
                      ? std::chrono::system_clock::now()
                      : std::chrono::system_clock::time_point(
                            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                std::chrono::seconds(attr->st_mtim.tv_sec) +
                                std::chrono::nanoseconds(attr->st_mtim.tv_nsec)));
  auto r = Fs(req).SetAttr(ino, s);
  if (!r.ok()) return ReplyError(req, r.error());
  fuse_reply_attr(req, &*r, Fs(req).config().metadata_ttl);
}

// --direct-io (FsConfig::direct_io): every open file bypasses the page cache
// (FOPEN_DIRECT_IO), so READs come at the application's size, one at a time
// per descriptor, and the kernel copies straight from the part buffer into
// the caller's; writes likewise go to the writer without page-cache pages.
// MAP_SHARED mmap of such a file needs FUSE_DIRECT_IO_ALLOW_MMAP, which
// libfuse 3.14 cannot negotiate (its capabilities end at
// FUSE_CAP_EXPIRE_ONLY); InitFlagsIo adds it to the INIT reply
// (fuse_session.cc). MAP_PRIVATE reads through the page cache everywhere.
// See docs/MOUNTING.md.
//
// Handles of a file being written (`direct`: every write handle, and read
// handles served from a writer) are always direct I/O: each write() reaches
// the staged writer straight from the application's pages instead of
// through fresh page-cache pages (less CPU), and reads see the writer's
// current bytes, which change under any page cache. A shared mapping of
// such a file (FUSE_DIRECT_IO_ALLOW_MMAP) faults its pages in with READs the
// writer answers and writes dirty pages back with WRITEs at msync, munmap
// and close.
void SetCaching(fuse_req_t req, fuse_file_info* fi, bool keep_cache, bool direct) {
  const bool writes = (fi->flags & O_ACCMODE) != O_RDONLY;
  fi->direct_io = (writes || direct || Fs(req).config().direct_io) ? 1 : 0;
  fi->keep_cache = keep_cache ? 1 : 0;  // still matters for MAP_PRIVATE pages
}

// The passthrough table once the kernel accepted FUSE_PASSTHROUGH, else null.
PassthroughTable* Passthrough(fuse_req_t req) {
  const auto& session = *static_cast<SessionData*>(fuse_req_userdata(req));
  if (session.passthrough == nullptr || session.init_io == nullptr ||
      (session.init_io->added() & kFusePassthrough) == 0) {
    return nullptr;
  }
  return session.passthrough;
}

void ReleaseHandle(fuse_req_t req, uint64_t fh) {
  if (PassthroughTable* pt = Passthrough(req)) pt->OnRelease(fh);
  Fs(req).Release(fh);
}

// A read-only open of an object with a verified local copy is answered with
// FOPEN_PASSTHROUGH and a backing id (passthrough.h): libfuse 3.14's
// fuse_reply_open cannot carry the id, so the 16-byte fuse_open_out is sent
// as it is. Every other open is counted, so that no inode mixes the modes.
void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  PassthroughTable* const pt = Passthrough(req);
  const bool read_only = (fi->flags & O_ACCMODE) == O_RDONLY;
  auto r = Fs(req).Open(ino, fi->flags, fuse_req_ctx(req)->pid, pt != nullptr && read_only);
  if (!r.ok()) return ReplyError(req, r.error());
  fi->fh = r->fh;
  SetCaching(req, fi, r->keep_cache, r->direct_io);
  if (pt != nullptr) {
    const int copy_fd = r->local_copy ? r->local_copy->fd() : -1;
    if (auto id = pt->OnOpen(ino, r->fh, std::move(r->local_copy), copy_fd)) {
      spdlog::debug("open of inode {}: passthrough (backing id {})", ino, *id);
      FuseOpenOut out{r->fh, kFopenPassthrough, *id};
      if (fuse_reply_buf(req, reinterpret_cast<const char*>(&out), sizeof(out)) == -ENOENT) {
        ReleaseHandle(req, r->fh);
      }
      return;
    }
  }
  if (fuse_reply_open(req, fi) == -ENOENT) ReleaseHandle(req, r->fh);
}

// Answered when the bytes are there, maybe on another thread: timed until then.
void Read(fuse_req_t req, fuse_ino_t /*ino*/, size_t size, off_t off, fuse_file_info* fi) {
  FuseObserver* const o = Observer(req);
  const auto start =
      o != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  Fs(req).ServeRead(
      fi->fh, static_cast<uint64_t>(off), size,
      [req, o, start](const Error* error, std::span<const std::span<const std::byte>> data) {
        if (error != nullptr) {
          // A store that stalled past every retry failed the read like any
          // other store failure: readers expect EIO; the log says it stalled.
          const int err = ErrnoOf(*error);
          ReplyErrno(req, err == ETIMEDOUT ? EIO : err, FuseOp::kRead);
        } else {
          std::vector<iovec> iov;
          iov.reserve(data.size());
          uint64_t bytes = 0;
          for (const auto& seg : data) {
            iov.push_back({const_cast<std::byte*>(seg.data()), seg.size()});
            bytes += seg.size();
          }
          fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
          if (o != nullptr) o->OnRead(bytes);
        }
        if (o != nullptr) o->OnOp(FuseOp::kRead, std::chrono::steady_clock::now() - start);
      });
}

void Write(fuse_req_t req, fuse_ino_t /*ino*/, const char* buf, size_t size, off_t off,
           fuse_file_info* fi) {
  auto r = Fs(req).Write(fi->fh, static_cast<uint64_t>(off),
                         std::span(reinterpret_cast<const std::byte*>(buf), size));
  if (!r.ok()) return ReplyError(req, r.error());
  if (FuseObserver* o = Observer(req)) o->OnWrite(*r);
  fuse_reply_write(req, *r);
}

void Flush(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  ReplyStatus(req, Fs(req).Flush(fi->fh, fuse_req_ctx(req)->pid));
}

void Fsync(fuse_req_t req, fuse_ino_t /*ino*/, int /*datasync*/, fuse_file_info* fi) {
  ReplyStatus(req, Fs(req).Fsync(fi->fh));
}

void Release(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  ReleaseHandle(req, fi->fh);
  fuse_reply_err(req, 0);
}

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t /*mode*/,
            fuse_file_info* fi) {
  auto r = Fs(req).Create(parent, name, fi->flags, fuse_req_ctx(req)->pid);
  if (!r.ok()) return ReplyError(req, r.error());
  fi->fh = r->second.fh;
  SetCaching(req, fi, false, true);
  fi->direct_io = 1;  // a created handle always writes, even when O_RDONLY
  fuse_entry_param p = ToParam(r->first);
  if (PassthroughTable* pt = Passthrough(req)) pt->OnOpen(r->first.ino, r->second.fh, nullptr, -1);
  if (fuse_reply_create(req, &p, fi) == -ENOENT) {
    ReleaseHandle(req, r->second.fh);
    Fs(req).Forget(r->first.ino, 1);
  }
}

void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto r = Fs(req).OpenDir(ino);
  if (!r.ok()) return ReplyError(req, r.error());
  fi->fh = r->fh;
  fi->cache_readdir = r->cache_entries;
  fi->keep_cache = r->keep_cache;
  if (fuse_reply_open(req, fi) == -ENOENT) Fs(req).ReleaseDir(r->fh);
}

void DoReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
               bool plus) {
  // Reused per worker thread: the kernel asks for up to max_pages of entries,
  // and a fresh zeroed buffer per call cost more than filling it.
  thread_local std::unique_ptr<char[]> storage;
  thread_local size_t capacity = 0;
  if (capacity < size) {
    storage.reset(new char[size]);
    capacity = size;
  }
  char* const data = storage.get();
  size_t used = 0;
  DirFiller fill = [&](const std::string& name, const struct stat& st, const Entry* entry,
                       off_t next) {
    size_t n;
    if (plus) {
      fuse_entry_param p = ToParam(*entry);
      n = fuse_add_direntry_plus(req, data + used, size - used, name.c_str(), &p, next);
    } else {
      n = fuse_add_direntry(req, data + used, size - used, name.c_str(), &st, next);
    }
    if (n > size - used) return false;
    used += n;
    return true;
  };
  Status s = Fs(req).ReadDir(ino, fi->fh, off, plus, fill, fuse_req_ctx(req)->pid);
  if (!s.ok() && used == 0) return ReplyError(req, s.error());
  fuse_reply_buf(req, data, used);
}

void ReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  DoReadDir(req, ino, size, off, fi, false);
}

void ReadDirPlus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  DoReadDir(req, ino, size, off, fi, true);
}

void ReleaseDir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  Fs(req).ReleaseDir(fi->fh);
  fuse_reply_err(req, 0);
}

void StatFs(fuse_req_t req, fuse_ino_t /*ino*/) {
  struct statvfs s = Fs(req).StatFs();
  fuse_reply_statfs(req, &s);
}

void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t /*mode*/) {
  auto r = Fs(req).Mkdir(parent, name);
  if (!r.ok()) return ReplyError(req, r.error());
  ReplyEntry(req, *r);
}

void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ReplyStatus(req, Fs(req).Rmdir(parent, name));
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ReplyStatus(req, Fs(req).Unlink(parent, name));
}

void Symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  auto r = Fs(req).Symlink(target, parent, name);
  if (!r.ok()) return ReplyError(req, r.error());
  ReplyEntry(req, *r);
}

void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  auto r = Fs(req).Mknod(parent, name, mode, rdev);
  if (!r.ok()) return ReplyError(req, r.error());
  ReplyEntry(req, *r);
}

void ReadLink(fuse_req_t req, fuse_ino_t ino) {
  auto r = Fs(req).ReadLink(ino);
  if (!r.ok()) return ReplyError(req, r.error());
  fuse_reply_readlink(req, r->c_str());
}

void FsyncDir(fuse_req_t req, fuse_ino_t ino, int /*datasync*/, fuse_file_info* /*fi*/) {
  ReplyStatus(req, Fs(req).FsyncDir(ino));
}

void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
            const char* newname, unsigned int flags) {
  ReplyStatus(req, Fs(req).Rename(parent, name, newparent, newname, flags));
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = Init;
  ops.lookup = Timed<FuseOp::kLookup, Lookup>::Call;
  ops.forget = Timed<FuseOp::kForget, Forget>::Call;
  ops.forget_multi = Timed<FuseOp::kForget, ForgetMulti>::Call;
  ops.getattr = Timed<FuseOp::kGetAttr, GetAttr>::Call;
  ops.setattr = Timed<FuseOp::kSetAttr, SetAttr>::Call;
  ops.open = Timed<FuseOp::kOpen, Open>::Call;
  ops.read = Read;
  ops.write = Timed<FuseOp::kWrite, Write>::Call;
  ops.flush = Timed<FuseOp::kFlush, Flush>::Call;
  ops.fsync = Timed<FuseOp::kFsync, Fsync>::Call;
  ops.release = Timed<FuseOp::kRelease, Release>::Call;
  ops.fsyncdir = Timed<FuseOp::kFsyncDir, FsyncDir>::Call;
  ops.create = Timed<FuseOp::kCreate, Create>::Call;
  ops.opendir = Timed<FuseOp::kOpenDir, OpenDir>::Call;
  ops.readdir = Timed<FuseOp::kReadDir, ReadDir>::Call;
  ops.readdirplus = Timed<FuseOp::kReadDirPlus, ReadDirPlus>::Call;
  ops.releasedir = Timed<FuseOp::kReleaseDir, ReleaseDir>::Call;
  ops.statfs = Timed<FuseOp::kStatFs, StatFs>::Call;
  ops.mkdir = Timed<FuseOp::kMkdir, Mkdir>::Call;
  ops.rmdir = Timed<FuseOp::kRmdir, Rmdir>::Call;
  ops.unlink = Timed<FuseOp::kUnlink, Unlink>::Call;
  ops.rename = Timed<FuseOp::kRename, Rename>::Call;
  // Not timed yet: FuseOp has no entries for them (fuse_observer.h).
  ops.symlink = Timed<FuseOp::kSymlink, Symlink>::Call;
  ops.readlink = Timed<FuseOp::kReadLink, ReadLink>::Call;
  ops.mknod = Timed<FuseOp::kMknod, Mknod>::Call;
  return ops;
}

}  // namespace

void WantTransportSettings(fuse_conn_info* conn) {
  auto want = [conn](unsigned cap) {
    if (conn->capable & cap) conn->want |= cap;
  };
  want(FUSE_CAP_ASYNC_READ);
  want(FUSE_CAP_ATOMIC_O_TRUNC);
  want(FUSE_CAP_PARALLEL_DIROPS);
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;  // writes go straight to the writer
  conn->max_write = kMaxIo;
  conn->max_readahead = kMaxReadahead;
  // Asynchronous READs the kernel keeps in flight (its default is 12): one
  // sequential reader's 16 MiB readahead is 16 READs of 1 MiB, and several
  // readers share the limit.
  conn->max_background = kMaxBackground;
  conn->congestion_threshold = kMaxBackground * 3 / 4;
  conn->max_read = kMaxIo;  // must match the session's max_read mount option
}
const fuse_lowlevel_ops& FuseOperations() {
  static const fuse_lowlevel_ops ops = MakeOps();
  return ops;
}

}  // namespace bucketfs::fs
