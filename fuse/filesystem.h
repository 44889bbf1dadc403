// Filesystem: the FUSE-free core of bucketfs. It maps the kernel's requests,
// expressed with inode numbers and file handles, onto S3 calls, and enforces
// the rules written in docs/SEMANTICS.md. The libfuse adapter (fuse_adapter.cc)
// calls exactly one method per request and replies with its result, or with
// the errno its Error carries.
//
// Parts:
// - InodeTable: inode numbers <-> (parent, name, bucket, key), with exact
//   lookup counts (see inode_table.h). Methods that return an Entry have
//   incremented the count by one; the kernel returns it through Forget.
// - LocalNamespace: directories made by mkdir and files being written, which
//   S3 does not know yet.
// - Open handles: a FileReader per read handle (direct ranged GETs, or the
//   prefetcher's), a FileWriter per write handle (sequential multipart
//   upload), a DirHandle per opendir (the listing, paged as the kernel asks).
//
// A name resolves from what the mount knows (NameCache: S3's recent answers,
// its own changes, a directory's complete listing; then the --cache), else by
// HeadObject(key) and ListObjectsV2(prefix "key/", max-keys 1) at once: a
// found object makes it a file (which hides a directory of the same name),
// else a non-empty listing makes it a directory. A directory that receives
// many such lookups gets its listing fetched once, in the background.
//
// Thread-safe: every method may be called from any FUSE worker thread.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "base/task_runner.h"
#include "base/thread_annotations.h"
#include "fuse/cached_metadata.h"
#include "fuse/file_reader.h"
#include "fuse/file_writer.h"
#include "fuse/fs_config.h"
#include "fuse/inode_table.h"
#include "fuse/io_counters.h"
#include "fuse/kept_uploads.h"
#include "fuse/listing_prefetcher.h"
#include "fuse/local_namespace.h"
#include "fuse/name_cache.h"
#include "fuse/pending_uploads.h"
#include "fuse/read_order.h"
#include "fuse/sibling_hints.h"
#include "fuse/stat_walkers.h"
#include "handover/session_journal.h"
#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::fs {

struct Entry {
  Ino ino = 0;
  struct stat attr {};
  double attr_timeout = 0;
  double entry_timeout = 0;
};

struct OpenedDir {
  uint64_t fh = 0;
  // The kernel may cache this directory's entries (FOPEN_CACHE_DIR) ...
  bool cache_entries = false;
  // ... and keep what it cached at a previous open (FOPEN_KEEP_CACHE): the
  // complete listing was served within the metadata TTL. Local changes made
  // through the kernel drop its cache on their own.
  bool keep_cache = false;
};

struct OpenedFile {
  uint64_t fh = 0;
  bool keep_cache = false;  // same ETag as the previous open: the page cache is still good
  // Served from a writer's state, which changes under the page cache.
  bool direct_io = false;
  // A verified local copy of the whole object (asked for with
  // want_local_copy), which the kernel may read itself (passthrough).
  std::shared_ptr<cache::CachedFile> local_copy;
};

// Which attributes a setattr asks to change (mirrors FUSE_SET_ATTR_*).
struct SetAttrRequest {
  std::optional<uint64_t> size;
  bool mode = false, uid = false, gid = false, atime = false, mtime = false;
  // The values asked for, where the flag above is set (mtime: "now" already resolved).
  mode_t mode_value = 0;
  uid_t uid_value = 0;
  gid_t gid_value = 0;
  std::chrono::system_clock::time_point mtime_value{};
};

// Called for each directory entry; `next_offset` is the offset to resume
// after it. In readdirplus mode `entry` is set (ino 0 for "." and ".."); it
// is null in plain readdir. Returns false when the reply buffer is full (the
// entry was not added).
using DirFiller = std::function<bool(const std::string& name, const struct stat& attr,
                                     const Entry* entry, off_t next_offset)>;

// The read path and the write-back the core serves files through; the
// composition root (mount-tools/mount_wiring.h) chooses them.
struct FsComponents {
  std::shared_ptr<FileReaderFactory> readers;
  std::shared_ptr<FileWriterFactory> writers;
  // Where the inode numbers and handles the kernel holds are recorded for a
  // restarted daemon (handover/session_journal.h); null: not recorded.
  std::shared_ptr<handover::SessionJournal> journal;
};

class Filesystem {
 public:
  // REQUIRES: client, components.readers and components.writers are set.
  Filesystem(std::shared_ptr<s3::ObjectClient> client, FsConfig config, FsComponents components);
  ~Filesystem();
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  // The name cache's Find answers from memory and those that were not (metrics).
  uint64_t name_cache_hits() const { return names_.hits(); }
  uint64_t name_cache_misses() const { return names_.misses(); }

  // --- Names and attributes (fs_lookup.cc, filesystem.cc)
  // `pid`: the caller (0: unknown); see StatWalkers.
  Result<Entry> Lookup(Ino parent, const std::string& name, pid_t pid = 0);
  void Forget(Ino ino, uint64_t nlookup);
  Result<struct stat> GetAttr(Ino ino);
  Result<struct stat> SetAttr(Ino ino, const SetAttrRequest& request);
  struct statvfs StatFs() const;

  // --- Directories (fs_readdir.cc)
  Result<OpenedDir> OpenDir(Ino ino);
  // In readdirplus mode, files carry attributes (an inode each) only when
  // --readdirplus is on, or auto and `pid` is 0 or a stat walker (StatWalkers);
  // otherwise their `entry` has ino 0: a name the kernel makes no inode for.
  Status ReadDir(Ino ino, uint64_t fh, off_t offset, bool plus, const DirFiller& fill,
                 pid_t pid = 0);
  void ReleaseDir(uint64_t fh);

  // --- Reading (fs_read.cc); `flags` are open(2) flags, `pid` the caller's
  // `want_local_copy`: a read-only open of an object fully in the data cache
  // also returns its verified local copy (OpenedFile::local_copy).
  Result<OpenedFile> Open(Ino ino, int flags, pid_t pid = 0, bool want_local_copy = false);
  Result<size_t> Read(uint64_t fh, uint64_t offset, std::span<std::byte> dest);
  // Serves a FUSE read with the handle's ReadSegments; `done` runs exactly once.
  void ServeRead(uint64_t fh, uint64_t offset, size_t size, ReadDone done);
  // Final close of a handle: commits a pending upload (its error is logged).
  void Release(uint64_t fh);

  // --- Read order (fs_read_order.cc, read_order.h): the files a loader will
  // open, in order, as paths relative to the mountpoint; `reset` replaces the
  // order, else the paths are appended. Returns how many were taken; a bad
  // path is an EINVAL error and nothing is taken.
  Result<size_t> AnnounceOrder(bool reset, const std::vector<std::string>& paths);
  ReadOrder::Stats read_order_stats() const { return order_->stats(); }

  // --- Writing (fs_write.cc)
  Result<std::pair<Entry, OpenedFile>> Create(Ino parent, const std::string& name, int flags,
                                              pid_t pid = 0);
  Result<size_t> Write(uint64_t fh, uint64_t offset, std::span<const std::byte> data);
  // close(2): completes the upload and returns its real result, when the
  // closing process is the one that opened the file and something was
  // written through this handle. Otherwise the upload stays open for release, so that a shell's
  // `cmd > file` (open, dup2, close, then write) and forked children closing
  // an inherited descriptor do not end the file early.
  Status Flush(uint64_t fh, pid_t pid = 0);
  // fsync(2): makes everything written so far the object in S3, whoever
  // asks; the file stays open for writing (the next write starts the next
  // version from it).
  Status Fsync(uint64_t fh);
  // fsync(2) of a directory: with --async-close, waits for every upload of a
  // closed file and returns the first failure not yet reported.
  Status FsyncDir(Ino ino);

  // --- Namespace (fs_namespace.cc)
  Result<Entry> Mkdir(Ino parent, const std::string& name);
  Status Rmdir(Ino parent, const std::string& name);
  // The name goes at once; the object goes when no handle has it open
  // (fs_unlink.cc, docs/SEMANTICS.md).
  Status Unlink(Ino parent, const std::string& name);
  // `flags`: RENAME_NOREPLACE is honoured; RENAME_EXCHANGE fails with EINVAL.
  Status Rename(Ino parent, const std::string& name, Ino new_parent, const std::string& new_name,
                unsigned flags);

  // --- Symbolic links (fs_symlink.cc), stored as s3fs stores them (object_type.h)
  Result<Entry> Symlink(const std::string& target, Ino parent, const std::string& name);
  Result<std::string> ReadLink(Ino ino);

  // --- Special files and empty regular files (fs_mknod.cc): FIFOs, sockets
  // and device nodes are empty objects whose mode says their type, as s3fs
  // stores them; they need --preserve-attrs (EPERM otherwise).
  Result<Entry> Mknod(Ino parent, const std::string& name, mode_t mode, dev_t rdev);

  // Commits every upload still open (unmount, SIGTERM). Returns the first error.
  Status Shutdown();

  // --- Restart without unmounting (fs_handover.cc)
  // Takes over what a previous daemon of this mount handed the kernel: its
  // inode numbers and open handles. Read handles reopen the version they
  // pinned; handles that were writing fail from now on with EIO (their data
  // was in the previous daemon); directory handles list again. REQUIRES: a
  // new Filesystem, before the first request.
  void Restore(const handover::SessionState& state);
  // Before this daemon exits leaving the mount to its successor: finishes
  // the uploads of closed files and abandons those of files still open (no
  // partial object appears; their writers get EIO from the successor).
  // Returns the first error of a closed file's upload.
  Status PrepareHandover();

  const FsConfig& config() const { return config_; }
  const InodeTable& inodes() const { return inodes_; }
  // Bytes through the mount and failed operations, for status reports.
  const IoCounters& io_counters() const { return io_counters_; }
  // --async-close: background uploads so far, and failed ones whose bytes
  // are kept (all zero without the option).
  struct BackgroundUploads {
    uint64_t submitted = 0, succeeded = 0, failed = 0, kept = 0;
  };
  BackgroundUploads background_uploads() const;
  // Handles open now (files, directories): back to zero once every process
  // closed them, which a soak test checks.
  struct OpenHandles {
    size_t files = 0, dirs = 0;
  };
  OpenHandles open_handles() const;

 private:
  struct FileHandle;
  struct DirHandle;
  // An object whose name was unlinked while read handles had it open: it
  // stays in S3, so their reads go on, until the last of them closes.
  struct UnlinkedObject {
    std::string bucket, key;
    std::set<std::string> etags;  // the versions the handles read
    int open = 0;                 // handles not yet released
    bool replaced = false;        // this mount wrote a new object under the key
  };
  // What a name in a directory stands for, before it gets an inode.
  struct Resolved {
    Kind kind = Kind::kFile;
    std::string bucket, key;
    ObjectAttrs attrs;
  };

  // fs_lookup.cc
  Result<InodeSnapshot> GetDir(Ino ino) const;
  Result<Resolved> Resolve(const InodeSnapshot& dir, const std::string& name);
  // Asks S3 (one round trip; two for a name the kernel holds as a file that
  // is now gone); stores the answer.
  Result<Resolved> ResolveRemote(const InodeSnapshot& dir, const std::string& name);
  // The kind of the inode the kernel holds for `name` in `dir`, if any.
  std::optional<Kind> HeldKind(const InodeSnapshot& dir, const std::string& name) const;
  // A file known from a listing whose type is unknown (a size a link's body
  // may have): its HeadObject says which.
  Result<Resolved> ResolveType(const InodeSnapshot& dir, const std::string& name);
  // What the mount already knows of a listed file's type (its inode, or this
  // mount's own answer for the same ETag); `listed` unchanged otherwise.
  ObjectAttrs KnownType(Ino dir, const std::string& bucket, const std::string& dir_key,
                        const std::string& name, const ObjectAttrs& listed);
  // Fetches the complete listing of `dir_key` on lookup_pool_, into names_.
  void ListForLookups(const std::string& bucket, const std::string& dir_key);
  Result<Resolved> ResolveBucket(const std::string& name);
  Result<ObjectAttrs> HeadFresh(const InodeSnapshot& file);
  // What the file inode `ino` holds after an answer was offered to it (the
  // answer may have lost to a newer write of this mount); `answer` otherwise.
  ObjectAttrs AttrsHeld(Ino ino, const ObjectAttrs& answer) const;
  // What a HeadObject answer says, learned now.
  // `asked`: when the HEAD was sent (what S3 said is no older than that).
  static ObjectAttrs FromHead(const s3::HeadObjectResult& h,
                              std::chrono::steady_clock::time_point asked);
  Entry MakeEntry(Ino ino, Kind kind, const ObjectAttrs& attrs) const;
  struct stat MakeStat(Ino ino, Kind kind, const ObjectAttrs& attrs) const;
  bool IsBucketList(const InodeSnapshot& dir) const;
  // Only a HEAD can tell what `attrs` is (probe_link_types: a small listed
  // object), or (--preserve-attrs) its owner, mode and time.
  bool TypeUnknown(const ObjectAttrs& attrs) const {
    return (config_.probe_link_types && attrs.type == ObjectType::kUnknown) ||
           (config_.preserve_attrs && !attrs.metadata_known);
  }
  // --preserve-attrs: stores `changed` (mode, uid, gid, mtime) in the
  // object's metadata by a copy onto itself; returns the new attributes.
  Result<ObjectAttrs> StoreAttrs(Ino ino, const std::string& bucket, const std::string& key,
                                 const ObjectAttrs& changed);
  Status CheckWritable(const InodeSnapshot& dir, const std::string& name) const;

  // fs_readdir.cc: fetches the next page into the handle's listing (all-buckets
  // root: the bucket list); merges local entries once S3 has no more.
  // REQUIRES: h.mu (checked on the definition: DirHandle is incomplete here).
  Status FetchNextPage(DirHandle& h);

  // fs_namespace.cc
  // Copies an object (server side); `known`: the source's fresh attributes,
  // else a HEAD asks. Returns the copy's attributes.
  Result<ObjectAttrs> CopyObject(const std::string& src_bucket, const std::string& src_key,
                                 const std::string& dst_bucket, const std::string& dst_key,
                                 const std::optional<ObjectAttrs>& known);
  Status RenameDir(const InodeSnapshot& src_dir, const std::string& name, const Resolved& src,
                   const InodeSnapshot& dst_dir, const std::string& new_name, bool dst_exists);

  // fs_unlink.cc
  // The name was unlinked while open: lookups and listings do not show it.
  bool IsUnlinked(const std::string& bucket, const std::string& key) const;
  // The name goes (unlink, rename): handles that may read its object keep it
  // until the last of them closes. False when none does (delete it now).
  bool KeepForOpenHandles(const std::string& bucket, const std::string& key) REQUIRES(handles_mu_);
  // This mount wrote a new object under `key`: an unlinked one is gone with it.
  void ReplacedObject(const std::string& bucket, const std::string& key);
  // An object this mount just put under `name` of `dir` (symlink, mknod):
  // recorded in the caches and handed to the kernel as a new inode.
  Entry EnterNewObject(const InodeSnapshot& dir, const std::string& name, const ObjectAttrs& attrs);
  // A released handle of an unlinked name: the last one deletes the object.
  void ReleaseUnlinked(FileHandle& handle);

  // fs_read_order.cc
  Result<ReadOrder::Target> OrderTarget(std::string_view path) const;
  // Resolves the files entering the order's window, then hints the read path.
  void AdvanceOrder() EXCLUDES(order_hint_mu_);
  // Hands the order's wanted files to the read path (under order_hint_mu_).
  void HintOrderedFiles() EXCLUDES(order_hint_mu_);
  // The version to fetch ahead for `t`; nullopt: none (being written, gone, a link).
  std::optional<ObjectVersion> ResolveForOrder(const ReadOrder::Target& t);

  void JournalOpen(uint64_t fh, Ino ino, handover::HandleKind kind, uint64_t size = 0,
                   const std::string& etag = {});
  void JournalClose(uint64_t fh);

  std::shared_ptr<FileHandle> GetFile(uint64_t fh) const;
  std::shared_ptr<DirHandle> GetDirHandle(uint64_t fh) const;
  Status CommitHandle(FileHandle& handle);
  // fs_write.cc: commits the version written so far; the writer stays open.
  Status SyncHandle(FileHandle& handle);
  // Another open handle writes through `handle`'s writer.
  bool WriterShared(const FileHandle& handle) const EXCLUDES(handles_mu_);
  bool WriterSharedLocked(const FileHandle& handle) const REQUIRES(handles_mu_);
  // An open handle, other than `except`, that writes through `writer`; null if none.
  FileHandle* OtherHandleOfLocked(const FileWriter& writer, const FileHandle* except) const
      REQUIRES(handles_mu_);
  // Returns once the upload of bucket/key that the release of its last handle
  // started has ended, whether the release runs it or --async-close does in
  // the background; at once when there is none.
  void WaitForReleasedUpload(const std::string& bucket, const std::string& key)
      EXCLUDES(handles_mu_);
  // An open handle that writes bucket/key; null if none.
  FileHandle* WritingHandleLocked(const std::string& bucket, const std::string& key) const
      REQUIRES(handles_mu_);
  // --preserve-attrs: lays `changed` over the attributes an open handle
  // writing bucket/key stores after its upload; false when no handle can
  // (none open, or its upload's result is published already).
  bool PendAttrs(const std::string& bucket, const std::string& key, const ObjectAttrs& changed)
      EXCLUDES(handles_mu_);
  // A handle released while others write the file gives its pending
  // attributes to one of them, since only the last release stores them.
  void PassPendingAttrsLocked(FileHandle& released) REQUIRES(handles_mu_);
  // Returns at once, or, while the release of `writer`'s last handle ends
  // its upload, once that release has published the upload's result.
  void WaitUntilEnded(const FileWriter& writer) const EXCLUDES(handles_mu_);
  // Open's one look at the file; *look_again (when given) is set when a
  // writer it joined was ended meanwhile, so that Open looks again.
  Result<OpenedFile> OpenOnce(Ino ino, int flags, pid_t pid, bool want_local_copy,
                              bool* look_again);
  // Registers `h` (under a new `fh`) as a handle of `writer` while another
  // handle still writes through it; false once the release of its last
  // handle ends (or has ended) its upload.
  bool JoinWriter(const std::shared_ptr<FileHandle>& h, const FileWriter& writer, uint64_t& fh)
      EXCLUDES(handles_mu_);
  // Drops a handle Open registered but could not complete.
  void Forget(uint64_t fh) EXCLUDES(handles_mu_);
  // The writer of an open handle of bucket/key, or null (none open, or its
  // last handle released and its upload ending).
  std::shared_ptr<FileWriter> OpenWriter(const std::string& bucket, const std::string& key) const
      EXCLUDES(handles_mu_);
  // Resizes a file nobody writes: a writer over the object, cut or grown,
  // committed at once.
  Result<ObjectAttrs> ResizeObject(const InodeSnapshot& in, const ObjectAttrs& attrs,
                                   uint64_t size);
  // --async-close: renames a file whose upload runs in the background by
  // chaining copy + delete after it; nullopt when it is not such a file (or
  // the upload already ended), for the usual rename.
  std::optional<Status> RenameUploading(const Resolved& src, const InodeSnapshot& src_dir,
                                        const std::string& name, const InodeSnapshot& dst_dir,
                                        const std::string& new_name);
  // --async-close: hands the handle's upload to pending_ (once).
  void SubmitUpload(const std::shared_ptr<FileHandle>& handle);
  std::optional<KeptUploads::Copy> KeepCopy(FileHandle& h);
  // With --async-close, waits until s3://bucket/key is no longer being
  // uploaded in the background (its result is reported by FsyncDir).
  void WaitForUpload(const std::string& bucket, const std::string& key);

  const std::shared_ptr<s3::ObjectClient> client_;
  const FsConfig config_;
  const std::shared_ptr<FileReaderFactory> readers_;
  const std::shared_ptr<FileWriterFactory> writers_;
  const std::shared_ptr<handover::SessionJournal> journal_;
  const std::chrono::system_clock::time_point mount_time_;
  InodeTable inodes_;
  LocalNamespace local_;
  NameCache names_;
  // The persistent metadata cache (--cache with a positive TTL); null: none.
  const std::unique_ptr<CachedMetadata> meta_;
  // Lists subdirectories of a directory just read into meta_; null without meta_.
  const std::unique_ptr<ListingPrefetcher> listing_prefetch_;
  SiblingHints siblings_;
  StatWalkers stat_walkers_;
  IoCounters io_counters_;

  mutable Mutex handles_mu_;
  uint64_t next_fh_ GUARDED_BY(handles_mu_) = 1;
  std::map<uint64_t, std::shared_ptr<FileHandle>> files_ GUARDED_BY(handles_mu_);
  // Writers whose last handle was released and whose upload is ending.
  std::set<const FileWriter*> ending_ GUARDED_BY(handles_mu_);
  mutable CondVar ended_;  // an entry left ending_
  std::map<uint64_t, std::shared_ptr<DirHandle>> dirs_ GUARDED_BY(handles_mu_);
  // Names unlinked while read handles hold them (fs_unlink.cc).
  std::map<std::pair<std::string, std::string>, std::shared_ptr<UnlinkedObject>> unlinked_
      GUARDED_BY(handles_mu_);
  std::atomic<size_t> unlinked_count_{0};  // unlinked_.size(): lookups skip the lock at 0
  // --async-close: closed files whose upload runs, by (bucket, key).
  std::map<std::pair<std::string, std::string>, std::shared_ptr<FileHandle>> uploading_
      GUARDED_BY(handles_mu_);
  // Uploads of closed files (--async-close); null without it.
  const std::unique_ptr<PendingUploads> pending_;
  const std::unique_ptr<KeptUploads> kept_;  // with pending_
  // The LISTs that run beside a lookup's HEAD and the listings fetched for
  // lookups. Last member: destroyed (drained) before what its tasks use.
  const std::unique_ptr<base::WorkerPool> lookup_pool_;
  // The announced read order, and where its files are resolved (HEADs off the
  // FUSE threads); destroyed (drained) first.
  const std::unique_ptr<ReadOrder> order_;
  // An open takes its file fetched ahead and marks it opened in the order
  // under this lock, and the order's wanted files are hinted under it: a
  // list of wanted files computed before the mark and hinted after the take
  // would fetch the opened file again.
  Mutex order_hint_mu_;
  const std::unique_ptr<base::WorkerPool> order_pool_;
};

// The errno an error carries, for the FUSE edge.
inline int ErrnoOf(const Error& e) { return e.errno_value > 0 ? e.errno_value : EIO; }
// A write or resize past what one S3 object can hold: EFBIG at once, not at upload.
inline Error FileTooLarge(const std::string& key, uint64_t size) {
  return MakeError(
      EFBIG, "FileTooLarge",
      key + ": " + std::to_string(size) + " bytes is more than an S3 object holds (5 TiB)");
}

}  // namespace bucketfs::fs
