// Filesystem: opendir/readdir/readdirplus. A DirHandle keeps every entry
// served so far, so offsets stay stable across the kernel's repeated calls;
// pages are fetched only when the kernel asks past what is buffered.
#include <spdlog/spdlog.h>

#include <functional>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "fuse/fs_handles.h"

namespace bucketfs::fs {
namespace {

constexpr off_t kDotEntries = 2;  // offsets 0 and 1 are "." and ".."

}  // namespace

Result<OpenedDir> Filesystem::OpenDir(Ino ino) {
  auto dir = GetDir(ino);
  if (!dir.ok()) return dir.error();
  OpenedDir opened;
  // A directory's attrs.fetched is when its complete listing was last served
  // (FetchNextPage): while that is fresh, the kernel's copy is as good as ours.
  opened.cache_entries = config_.metadata_ttl > 0;
  opened.keep_cache = opened.cache_entries && FreshWithin(dir->attrs, config_.metadata_ttl);
  auto h = std::make_shared<DirHandle>(ino, dir->bucket, dir->key, IsBucketList(*dir));
  {
    MutexLock lock(handles_mu_);
    opened.fh = next_fh_++;
    dirs_.emplace(opened.fh, std::move(h));
  }
  JournalOpen(opened.fh, ino, handover::HandleKind::kDir);
  return opened;
}

void Filesystem::ReleaseDir(uint64_t fh) {
  JournalClose(fh);
  MutexLock lock(handles_mu_);
  dirs_.erase(fh);
}

// The contract is written here, where DirHandle is complete.
Status Filesystem::FetchNextPage(DirHandle& h) REQUIRES(h.mu) {
  if (h.bucket_list) {
    auto r = client_->ListBuckets();
    if (!r.ok()) {
      spdlog::warn("ListBuckets: {}", r.error().ToString());
      return r.error();
    }
    for (const auto& b : r->buckets) h.listing.AddLocal({b.name, Kind::kDir, {}});
    h.done = true;
    inodes_.SetAttrs(h.ino, ObjectAttrs{0, {}, {}, std::chrono::steady_clock::now()});
    return Status::Ok();
  }
  // Every S3 entry is in: merge the local ones. `fetched`: when S3 said it.
  auto finish = [&](std::chrono::steady_clock::time_point fetched,
                    bool from_cache = false) REQUIRES(h.mu) {
    for (auto& e : local_.ChildrenOf(h.bucket, h.key)) h.listing.AddLocal(std::move(e));
    h.done = true;
    inodes_.SetAttrs(h.ino, ObjectAttrs{0, {}, {}, fetched});  // see OpenDir
    if (meta_ && from_cache) {  // the cache holds the entries: index them on first open
      siblings_.RememberLazy(h.ino, h.bucket, h.key,
                             [meta = meta_.get(), bucket = h.bucket,
                              key = h.key]() -> std::optional<std::vector<ListedEntry>> {
                               auto l = meta->Listing(bucket, key);
                               if (!l) return std::nullopt;
                               return std::move(l->entries);
                             });
    } else {
      siblings_.Remember(h.ino, h.bucket, h.key, h.listing.entries());
    }
    if (listing_prefetch_) {  // a walk reads the subdirectories next: list them ahead
      std::vector<std::string> subdirs;
      for (const auto& e : h.listing.entries()) {
        if (e.kind == Kind::kDir) subdirs.push_back(h.key + e.name + "/");
      }
      listing_prefetch_->Prefetch(h.bucket, h.key, subdirs);
    }
    return Status::Ok();
  };
  if (meta_ && h.token.empty() && h.listing.entries().empty()) {
    auto cached = meta_->Listing(h.bucket, h.key);
    // Being listed ahead right now: wait for that rather than list it twice.
    if (!cached && listing_prefetch_ && listing_prefetch_->WaitFor(h.bucket, h.key)) {
      cached = meta_->Listing(h.bucket, h.key);
    }
    if (cached) {
      h.listing.AddComplete(std::move(cached->entries));
      return finish(cached->fetched, /*from_cache=*/true);
    }
  }
  if (h.token.empty()) h.started = std::chrono::steady_clock::now();
  s3::ListObjectsV2Params p;
  p.bucket = h.bucket;
  p.prefix = h.key;
  p.delimiter = '/';  // a char: g++ 12 reports a bogus -Wrestrict for "/" here
  p.continuation_token = h.token;
  p.max_keys = config_.listing_page_size;
  const auto asked = std::chrono::steady_clock::now();
  auto r = client_->ListObjectsV2(p);
  if (!r.ok()) {
    spdlog::warn("ListObjectsV2 s3://{}/{}: {}", p.bucket, p.prefix, r.error().ToString());
    return r.error();
  }
  h.listing.AddPage(*r, asked);
  h.token = r->next_continuation_token;
  if (r->is_truncated && h.token.empty()) {
    spdlog::warn("ListObjectsV2 s3://{}/{}: truncated page without a continuation token", p.bucket,
                 p.prefix);
    return finish({});  // incomplete: never kept by the kernel
  } else if (r->is_truncated) {
    return Status::Ok();
  }
  names_.StoreListing(h.bucket, h.key, h.listing.entries(), h.started);  // S3 entries only
  if (meta_) {
    meta_->StoreListing(h.bucket, h.key, h.listing.entries());  // complete: S3 entries only
    return finish(std::chrono::steady_clock::now(), /*from_cache=*/true);
  }
  return finish(std::chrono::steady_clock::now());
}

Status Filesystem::ReadDir(Ino ino, uint64_t fh, off_t offset, bool plus, const DirFiller& fill,
                           pid_t pid) {
  auto h = GetDirHandle(fh);
  if (!h || h->ino != ino) return MakeError(EBADF, "BadHandle", "unknown directory handle");
  // Files with attributes: see StatWalkers. Names alone pay off only when a
  // later stat of one is answered from the metadata cache's copy of this
  // listing; without the cache each such stat costs a LIST and a HEAD (an
  // `ls -l` of 2,500 files made 5,000 requests), so every entry carries them.
  const bool file_attrs = config_.readdirplus != FsConfig::ReaddirPlus::kAuto || pid == 0 ||
                          !meta_ || stat_walkers_.WantsAttrs(pid);
  MutexLock lock(h->mu);
  for (off_t off = offset;; ++off) {
    if (off < kDotEntries) {
      Entry dot;  // ino 0: the kernel does not count lookups of "." and ".."
      dot.attr = MakeStat(ino, Kind::kDir, {});
      if (!fill(off == 0 ? "." : "..", dot.attr, plus ? &dot : nullptr, off + 1)) break;
      continue;
    }
    const auto index = static_cast<size_t>(off - kDotEntries);
    while (index >= h->listing.entries().size() && !h->done) {
      Status s = FetchNextPage(*h);
      if (!s.ok()) return s;
    }
    if (index >= h->listing.entries().size()) break;  // end of directory
    const ListedEntry& e = h->listing.entries()[index];
    const std::string key = h->bucket_list         ? std::string()
                            : e.kind == Kind::kDir ? h->key + e.name + "/"
                                                   : h->key + e.name;
    const std::string& bucket = h->bucket_list ? e.name : h->bucket;
    if (e.kind == Kind::kFile && IsUnlinked(bucket, key)) continue;  // open, but its name is gone
    ObjectAttrs attrs = e.attrs;
    // A file being written has its size of now, not of when the listing was
    // read: the kernel takes an entry's size unless a write began after it asked.
    if (e.kind == Kind::kFile && !h->bucket_list) {
      if (auto local = local_.FileAttrs(bucket, key)) attrs = *local;
    }
    if (e.kind == Kind::kFile && TypeUnknown(attrs)) {
      attrs = KnownType(ino, bucket, h->key, e.name, attrs);
    }
    // A file whose type only a HEAD can tell gets no attributes: a stat of it
    // then looks it up, and the lookup asks (object_type.h).
    const bool typed = !TypeUnknown(attrs);
    if (!plus || (e.kind == Kind::kFile && (!file_attrs || !typed))) {
      // d_ino must not be 0: glibc's readdir() skips such entries as deleted.
      // A name without an inode yet gets a stable number outside the table's.
      const Ino shown =
          inodes_.Find(ino, e.name)
              .value_or((std::hash<std::string>{}(e.name) ^ (ino * 0x9e3779b97f4a7c15ull)) |
                        (1ull << 63));
      struct stat st = MakeStat(shown, e.kind, attrs);
      Entry name_only;  // ino 0: the kernel makes no inode (and counts no lookup)
      name_only.attr = st;
      if (!fill(e.name, st, plus ? &name_only : nullptr, off + 1)) break;
      continue;
    }
    const Ino child = inodes_.Acquire(ino, e.name, e.kind, bucket, key,
                                      e.kind == Kind::kFile ? std::optional(attrs) : std::nullopt);
    Entry entry = MakeEntry(child, e.kind, e.kind == Kind::kFile ? AttrsHeld(child, attrs) : attrs);
    if (!fill(e.name, entry.attr, &entry, off + 1)) {
      inodes_.Forget(child, 1);  // not sent: the kernel will not forget it
      break;
    }
  }
  return Status::Ok();
}

}  // namespace bucketfs::fs
