// nullfs operations (see null_fs.h). INIT takes bucketfs's own transport
// settings (WantTransportSettings); the open flags copy its SetCaching.
#include "tests/nullfs/null_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "fuse-adapter/fuse_adapter.h"  // WantTransportSettings, kMaxIo: the same as bucketfs

namespace nullfs {
namespace {

using bucketfs::fs::kMaxIo;
constexpr double kTtl = 3600;

NullFs& Fs(fuse_req_t req) { return *static_cast<NullFs*>(fuse_req_userdata(req)); }

bool IsPatternFile(const NullFs& fs, fuse_ino_t ino) {
  return ino >= kFirstFile && ino < kFirstFile + fs.config().files;
}

struct stat DirAttr(fuse_ino_t ino) {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = S_IFDIR | (ino == kWriteIno ? 0777 : 0555);
  st.st_nlink = 2;
  st.st_uid = getuid();
  st.st_gid = getgid();
  return st;
}

struct stat FileAttr(fuse_ino_t ino, uint64_t size, mode_t perm) {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = S_IFREG | perm;
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(size);
  st.st_blksize = kMaxIo;
  st.st_blocks = static_cast<blkcnt_t>((size + 511) / 512);
  st.st_uid = getuid();
  st.st_gid = getgid();
  return st;
}

// The attributes of any inode, or nullopt when it does not exist.
std::optional<struct stat> Attr(NullFs& fs, fuse_ino_t ino) {
  if (ino == kRootIno || ino == kSeqIno || ino == kWriteIno) return DirAttr(ino);
  if (IsPatternFile(fs, ino)) return FileAttr(ino, fs.config().size, 0444);
  std::lock_guard lock(fs.mu);
  for (const auto& [name, w] : fs.written) {
    if (w.ino == ino) return FileAttr(ino, w.size, 0644);
  }
  return std::nullopt;
}

// "file-<n>" with n < files, as an index.
std::optional<uint64_t> PatternIndex(const NullFs& fs, std::string_view name) {
  constexpr std::string_view kPrefix = "file-";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) {
    return std::nullopt;
  }
  uint64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || n > fs.config().files) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n >= fs.config().files || (name.size() > kPrefix.size() + 1 && name[kPrefix.size()] == '0')) {
    return std::nullopt;
  }
  return n;
}

void ReplyEntry(fuse_req_t req, const struct stat& st) {
  fuse_entry_param p{};
  p.ino = st.st_ino;
  p.attr = st;
  p.attr_timeout = kTtl;
  p.entry_timeout = kTtl;
  fuse_reply_entry(req, &p);
}

void Init(void* /*userdata*/, fuse_conn_info* conn) { bucketfs::fs::WantTransportSettings(conn); }

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  NullFs& fs = Fs(req);
  const std::string_view n(name);
  if (parent == kRootIno && (n == "seq" || n == "write")) {
    return ReplyEntry(req, DirAttr(n == "seq" ? kSeqIno : kWriteIno));
  }
  if (parent == kSeqIno) {
    if (auto i = PatternIndex(fs, n)) {
      return ReplyEntry(req, FileAttr(kFirstFile + *i, fs.config().size, 0444));
    }
  }
  if (parent == kWriteIno) {
    std::unique_lock lock(fs.mu);
    auto it = fs.written.find(std::string(n));
    if (it != fs.written.end()) {
      const struct stat st = FileAttr(it->second.ino, it->second.size, 0644);
      lock.unlock();
      return ReplyEntry(req, st);
    }
  }
  fuse_reply_err(req, ENOENT);
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) {
  auto st = Attr(Fs(req), ino);
  if (!st) return (void)fuse_reply_err(req, ENOENT);
  fuse_reply_attr(req, &*st, kTtl);
}

void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
             fuse_file_info* /*fi*/) {
  NullFs& fs = Fs(req);
  if (ino >= kFirstWritten && (to_set & FUSE_SET_ATTR_SIZE)) {
    std::lock_guard lock(fs.mu);
    for (auto& [name, w] : fs.written) {
      if (w.ino == ino) w.size = static_cast<uint64_t>(attr->st_size);
    }
  }
  auto st = Attr(fs, ino);  // mode, owner and times are not kept
  if (!st) return (void)fuse_reply_err(req, ENOENT);
  fuse_reply_attr(req, &*st, kTtl);
}

// As bucketfs: handles that write are direct I/O; read handles only with
// --direct-io.
void SetCaching(NullFs& fs, fuse_file_info* fi) {
  const bool writes = (fi->flags & O_ACCMODE) != O_RDONLY;
  fi->direct_io = (writes || fs.config().direct_io) ? 1 : 0;
  fi->keep_cache = fs.config().keep_cache ? 1 : 0;
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  NullFs& fs = Fs(req);
  const bool writes = (fi->flags & O_ACCMODE) != O_RDONLY;
  if (IsPatternFile(fs, ino) && writes) return (void)fuse_reply_err(req, EACCES);
  if (!Attr(fs, ino)) return (void)fuse_reply_err(req, ENOENT);
  if (ino >= kFirstWritten && (fi->flags & O_TRUNC)) {
    std::lock_guard lock(fs.mu);
    for (auto& [name, w] : fs.written) {
      if (w.ino == ino) w.size = 0;
    }
  }
  SetCaching(fs, fi);
  fuse_reply_open(req, fi);
}

void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* /*fi*/) {
  NullFs& fs = Fs(req);
  if (!IsPatternFile(fs, ino)) return (void)fuse_reply_err(req, EIO);
  const uint64_t file_size = fs.config().size;
  const auto offset = static_cast<uint64_t>(off);
  if (offset >= file_size) return (void)fuse_reply_buf(req, nullptr, 0);
  size = std::min<uint64_t>({size, file_size - offset, kMaxIo});
  fuse_reply_buf(req, fs.pattern().At(ino - kFirstFile, offset), size);
}

void Write(fuse_req_t req, fuse_ino_t ino, const char* /*buf*/, size_t size, off_t off,
           fuse_file_info* /*fi*/) {
  NullFs& fs = Fs(req);
  {
    std::lock_guard lock(fs.mu);
    for (auto& [name, w] : fs.written) {
      if (w.ino == ino) w.size = std::max(w.size, static_cast<uint64_t>(off) + size);
    }
  }
  fuse_reply_write(req, size);
}

void ReplyOk(fuse_req_t req) { fuse_reply_err(req, 0); }
void Flush(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) { ReplyOk(req); }
void Fsync(fuse_req_t req, fuse_ino_t /*ino*/, int /*datasync*/, fuse_file_info* /*fi*/) {
  ReplyOk(req);
}
void Release(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) { ReplyOk(req); }

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t /*mode*/,
            fuse_file_info* fi) {
  NullFs& fs = Fs(req);
  if (parent != kWriteIno) return (void)fuse_reply_err(req, EACCES);
  struct stat st {};
  {
    std::lock_guard lock(fs.mu);
    auto [it, created] = fs.written.try_emplace(name, NullFs::Written{fs.next_ino, 0});
    if (created) ++fs.next_ino;
    it->second.size = 0;
    st = FileAttr(it->second.ino, 0, 0644);
  }
  SetCaching(fs, fi);
  fi->direct_io = 1;  // a created handle writes
  fuse_entry_param p{};
  p.ino = st.st_ino;
  p.attr = st;
  p.attr_timeout = kTtl;
  p.entry_timeout = kTtl;
  fuse_reply_create(req, &p, fi);
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  NullFs& fs = Fs(req);
  if (parent != kWriteIno) return (void)fuse_reply_err(req, EACCES);
  std::lock_guard lock(fs.mu);
  fuse_reply_err(req, fs.written.erase(name) == 1 ? 0 : ENOENT);
}

void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino != kRootIno && ino != kSeqIno && ino != kWriteIno) {
    return (void)fuse_reply_err(req, ENOTDIR);
  }
  fuse_reply_open(req, fi);
}

void ReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* /*fi*/) {
  NullFs& fs = Fs(req);
  std::vector<std::pair<std::string, struct stat>> entries = {{".", DirAttr(ino)},
                                                              {"..", DirAttr(kRootIno)}};
  if (ino == kRootIno) {
    entries.emplace_back("seq", DirAttr(kSeqIno));
    entries.emplace_back("write", DirAttr(kWriteIno));
  } else if (ino == kSeqIno) {
    for (uint64_t i = 0; i < fs.config().files; ++i) {
      entries.emplace_back("file-" + std::to_string(i),
                           FileAttr(kFirstFile + i, fs.config().size, 0444));
    }
  } else {
    std::lock_guard lock(fs.mu);
    for (const auto& [name, w] : fs.written)
      entries.emplace_back(name, FileAttr(w.ino, w.size, 0644));
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < entries.size(); ++i) {
    const size_t n =
        fuse_add_direntry(req, buf.data() + used, size - used, entries[i].first.c_str(),
                          &entries[i].second, static_cast<off_t>(i + 1));
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void ReleaseDir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* /*fi*/) { ReplyOk(req); }

void StatFs(fuse_req_t req, fuse_ino_t /*ino*/) {
  struct statvfs s {};
  s.f_bsize = kMaxIo;
  s.f_frsize = 4096;
  s.f_blocks = s.f_bfree = s.f_bavail = 1ull << 40;  // 4 PiB free: writes never run out
  s.f_files = s.f_ffree = 1ull << 30;
  s.f_namemax = 255;
  fuse_reply_statfs(req, &s);
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = Init;
  ops.lookup = Lookup;
  ops.getattr = GetAttr;
  ops.setattr = SetAttr;
  ops.open = Open;
  ops.read = Read;
  ops.write = Write;
  ops.flush = Flush;
  ops.fsync = Fsync;
  ops.release = Release;
  ops.create = Create;
  ops.unlink = Unlink;
  ops.opendir = OpenDir;
  ops.readdir = ReadDir;
  ops.releasedir = ReleaseDir;
  ops.statfs = StatFs;
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& Operations() {
  static const fuse_lowlevel_ops ops = MakeOps();
  return ops;
}

}  // namespace nullfs
