// Filesystem: construction, attributes, statfs, handle bookkeeping, shutdown
// (setattr is in fs_setattr.cc).
#include "fuse/filesystem.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "fuse/fs_handles.h"
#include "fuse/object_type.h"
#include "upload/upload_context.h"

namespace bucketfs::fs {
namespace {

constexpr int kListingPrefetchWorkers = 16;  // LISTs in flight for a recursive walk
// Files of an announced read order fetched ahead of the furthest one opened
// (and kept behind it for workers that lag: a DataLoader's workers open
// batches far apart), and the HEADs resolving them at once.
constexpr size_t kReadOrderWindow = 64;
constexpr int kReadOrderResolvers = 8;

NameCache::Options NameCacheOptions(const FsConfig& c) {
  NameCache::Options o;
  o.ttl = c.metadata_ttl;
  o.negative_ttl = c.negative_ttl;
  return o;
}

std::string KeptUploadsDir(const FsConfig& c) {
  if (!c.kept_uploads_dir.empty()) return c.kept_uploads_dir;
  return upload::DefaultStagingDir(c.cache_dir) + "/failed";
}

}  // namespace

Filesystem::Filesystem(std::shared_ptr<s3::ObjectClient> client, FsConfig config,
                       FsComponents components)
    : client_(std::move(client)),
      config_(std::move(config)),
      readers_(std::move(components.readers)),
      writers_(std::move(components.writers)),
      journal_(std::move(components.journal)),
      mount_time_(std::chrono::system_clock::now()),
      inodes_(config_.bucket, config_.bucket.empty() ? std::string() : config_.prefix),
      names_(NameCacheOptions(config_)),
      meta_(CachedMetadata::Open(config_)),
      listing_prefetch_(meta_ ? std::make_unique<ListingPrefetcher>(client_.get(), meta_.get(),
                                                                    config_.listing_page_size,
                                                                    kListingPrefetchWorkers)
                              : nullptr),
      pending_(config_.async_close ? std::make_unique<PendingUploads>(config_.async_uploads,
                                                                      config_.max_pending_uploads)
                                   : nullptr),
      kept_(config_.async_close ? std::make_unique<KeptUploads>(KeptUploadsDir(config_)) : nullptr),
      // Every FUSE thread's LIST, and a few listings for lookups beside them.
      lookup_pool_(std::make_unique<base::WorkerPool>(config_.max_threads + 4)),
      order_(std::make_unique<ReadOrder>(kReadOrderWindow)),
      order_pool_(std::make_unique<base::WorkerPool>(kReadOrderResolvers)) {
  if (!client_ || !readers_ || !writers_) {
    spdlog::critical("Filesystem built without an S3 client, a read path or a write-back");
    std::abort();
  }
  inodes_.SetJournal(journal_.get());
}

Filesystem::~Filesystem() = default;

struct stat Filesystem::MakeStat(Ino ino, Kind kind, const ObjectAttrs& attrs) const {
  struct stat st {};
  st.st_ino = ino;
  st.st_uid = config_.uid;
  st.st_gid = config_.gid;
  st.st_blksize = 1 << 20;  // tools size their buffers by this; 1 MiB suits S3
  if (kind == Kind::kDir) {
    st.st_mode = S_IFDIR | (config_.dir_mode & 07777);
    st.st_nlink = 2;
    st.st_size = 4096;
    const auto t = std::chrono::system_clock::to_time_t(mount_time_);
    st.st_mtim.tv_sec = st.st_ctim.tv_sec = st.st_atim.tv_sec = t;
    return st;
  }
  // A type still unknown (a small listed object) shows as the regular file
  // it almost always is; lookups ask S3 before handing it out (fs_lookup.cc).
  st.st_mode = attrs.type == ObjectType::kLink ? kLinkMode : S_IFREG | (config_.file_mode & 07777);
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(attrs.size);
  st.st_blocks = static_cast<blkcnt_t>((attrs.size + 511) / 512);
  auto mtime = attrs.mtime;
  if (config_.preserve_attrs) {  // what the object's metadata says, where it says it
    if (attrs.mode && attrs.type != ObjectType::kLink) {
      st.st_mode = TypeBits(attrs) | (*attrs.mode & 07777);
    }
    if (attrs.type == ObjectType::kSpecial) st.st_rdev = static_cast<dev_t>(attrs.rdev);
    if (attrs.uid) st.st_uid = *attrs.uid;
    if (attrs.gid) st.st_gid = *attrs.gid;
    if (attrs.meta_mtime) mtime = *attrs.meta_mtime;
  }
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  st.st_mtim.tv_sec = static_cast<time_t>(ns / 1000000000);
  st.st_mtim.tv_nsec = static_cast<long>(ns % 1000000000);
  st.st_ctim = st.st_atim = st.st_mtim;
  return st;
}

Entry Filesystem::MakeEntry(Ino ino, Kind kind, const ObjectAttrs& attrs) const {
  Entry e;
  e.ino = ino;
  e.attr = MakeStat(ino, kind, attrs);
  e.attr_timeout = config_.metadata_ttl;
  e.entry_timeout = config_.metadata_ttl;
  return e;
}

void Filesystem::Forget(Ino ino, uint64_t nlookup) { inodes_.Forget(ino, nlookup); }

Result<struct stat> Filesystem::GetAttr(Ino ino) {
  auto in = inodes_.Get(ino);
  if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  if (in->kind == Kind::kDir) return MakeStat(ino, Kind::kDir, {});
  if (auto local = local_.FileAttrs(in->bucket, in->key)) return MakeStat(ino, Kind::kFile, *local);
  // The commit that ended an upload recorded the inode's attributes before
  // the name stopped being local: a look taken before the first may be older.
  in = inodes_.Get(ino);
  if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  auto attrs = HeadFresh(*in);
  if (!attrs.ok()) return attrs.error();
  return MakeStat(ino, Kind::kFile, *attrs);
}

struct statvfs Filesystem::StatFs() const {
  struct statvfs s {};
  s.f_bsize = 1 << 20;
  s.f_frsize = 4096;
  s.f_blocks = s.f_bfree = s.f_bavail = 1ull << 40;  // 4 PiB: an object store has no "full"
  s.f_files = s.f_ffree = s.f_favail = 1ull << 32;
  s.f_namemax = kMaxNameLength;
  if (config_.read_only) s.f_flag |= ST_RDONLY;
  return s;
}

std::shared_ptr<Filesystem::FileHandle> Filesystem::GetFile(uint64_t fh) const {
  MutexLock lock(handles_mu_);
  auto it = files_.find(fh);
  return it == files_.end() ? nullptr : it->second;
}

std::shared_ptr<Filesystem::DirHandle> Filesystem::GetDirHandle(uint64_t fh) const {
  MutexLock lock(handles_mu_);
  auto it = dirs_.find(fh);
  return it == dirs_.end() ? nullptr : it->second;
}

void Filesystem::WaitUntilEnded(const FileWriter& writer) const {
  MutexLock lock(handles_mu_);
  while (ending_.count(&writer) != 0) ended_.Wait(handles_mu_);
}

void Filesystem::WaitForUpload(const std::string& bucket, const std::string& key) {
  if (!pending_) return;
  Status ignored = pending_->WaitFor(bucket, key);  // FsyncDir reports it
  (void)ignored;
}

Status Filesystem::FsyncDir(Ino ino) {
  if (!inodes_.Get(ino)) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  if (!pending_) return Status::Ok();
  return pending_->WaitAll();
}

Filesystem::BackgroundUploads Filesystem::background_uploads() const {
  if (!pending_) return {};
  const auto n = pending_->counts();
  return {n.submitted, n.succeeded, n.failed, kept_->kept()};
}

Filesystem::OpenHandles Filesystem::open_handles() const {
  MutexLock lock(handles_mu_);
  return {files_.size(), dirs_.size()};
}

Status Filesystem::Shutdown() {
  Status first;
  if (pending_) {
    first = pending_->WaitAll();
    const auto n = pending_->counts();
    if (n.submitted != 0) {
      spdlog::info("background uploads: {} submitted, {} succeeded, {} failed", n.submitted,
                   n.succeeded, n.failed);
      if (kept_->kept() != 0) {
        spdlog::error("the bytes of {} failed upload(s) are kept in {}", kept_->kept(),
                      kept_->dir());
      }
    }
  }
  std::vector<std::shared_ptr<FileHandle>> open;
  {
    MutexLock lock(handles_mu_);
    for (auto& [fh, h] : files_) {
      if (h->writer) open.push_back(h);
    }
  }
  for (auto& h : open) {
    Status s = CommitHandle(*h);
    if (!s.ok()) {
      spdlog::error("could not finish the upload of s3://{}/{}: {}", h->bucket, h->key,
                    s.error().ToString());
      if (first.ok()) first = s;
    }
  }
  if (!open.empty()) spdlog::info("finished {} open upload(s) at shutdown", open.size());
  readers_->Quiesce();  // before the caller destroys the FUSE session
  return first;
}

}  // namespace bucketfs::fs
