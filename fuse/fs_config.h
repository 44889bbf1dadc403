// FsConfig: everything the filesystem core needs to know about one mount,
// built once by the mount command (mount-tools/) from flags and -o options and
// then never changed. The core, the adapter and the readers/writers read it;
// nothing else configures them (no globals, no statics).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace bucketfs::fs {

struct FsConfig {
  // --- What is mounted
  // Bucket to mount. Empty: every bucket ListBuckets returns is a top-level
  // directory of the mount (the "s3://" form).
  std::string bucket;
  // Key prefix mounted as the root: "" or a string ending in "/".
  // REQUIRES: prefix.empty() || prefix.back() == '/'
  std::string prefix;

  // --- Ownership and permissions reported for every inode
  uid_t uid = 0;  // the mount command sets the mounting user (getuid())
  gid_t gid = 0;  // the mount command sets getgid()
  mode_t file_mode = 0644;
  mode_t dir_mode = 0755;

  // --- What mutations are allowed
  bool read_only = false;                // every mutation fails with EROFS
  bool allow_delete = false;             // unlink/rmdir of real objects; else EPERM
  bool allow_overwrite = false;          // O_TRUNC / rename onto an existing object; else EPERM
  bool allow_dir_rename = false;         // rename of a directory copies every key; else EXDEV
  uint64_t dir_rename_max_keys = 10000;  // larger directories are refused (EXDEV)
  bool dir_markers = false;              // mkdir writes a zero-byte "dir/" marker object

  // --- Metadata caching (kernel entry/attr timeouts)
  double metadata_ttl = 1.0;  // seconds the kernel may cache entries and attributes
  double negative_ttl = 0.0;  // seconds the kernel may cache "no such entry"
  // Which directory entries carry attributes (READDIRPLUS: an inode per name
  // in the kernel and here). kAuto: directories always, files only for a
  // process that stats files (fuse/stat_walkers.h); kOn: every entry; kOff:
  // none (plain READDIR; each stat then costs a LOOKUP).
  enum class ReaddirPlus { kAuto, kOn, kOff };
  ReaddirPlus readdirplus = ReaddirPlus::kAuto;

  // --- Data path
  uint64_t write_part_size = 16ull << 20;  // multipart part size; grown to stay <= 10000 parts
  bool prefetch = true;  // reads through the prefetcher; false: one ranged GET per read
  uint64_t read_part_size = 8ull << 20;  // largest ranged GET of a sequential read stream
  // Largest file fetched whole once its random reads have cost as many GETs
  // (prefetch random_whole_max); 0: never.
  uint64_t random_whole_max = 1ull << 30;
  // Every prefetched byte of the mount together (--max-memory); 0 = the
  // read path's default (memory::MemoryBudget::DefaultBudgetBytes()).
  uint64_t max_memory = 0;
  // Files are opened with FOPEN_DIRECT_IO (--direct-io): no page cache, one
  // copy from the part buffer to the application; MAP_SHARED mmap fails.
  bool direct_io = false;
  uint64_t max_read_request = 1ull << 20;  // FUSE max_read/max_write
  int max_upload_parts_in_flight = 4;      // per open file being written (--upload-concurrency)
  // --async-close: the last close of a written file returns before its
  // upload completes; fsync of a directory and unmount wait for them.
  bool async_close = false;
  int async_uploads = 16;            // background uploads at once
  size_t max_pending_uploads = 256;  // closed files not yet uploaded; more makes release wait
  // Where --async-close keeps the bytes of a failed background upload;
  // "" = "failed" beside the staging files (under --cache, or /var/tmp).
  std::string kept_uploads_dir;
  // Part buffers of every file being written together (--max-upload-memory);
  // 0 = the writers' default (256 MiB, or two windows of parts if larger).
  uint64_t max_upload_memory = 0;
  int listing_page_size = 1000;  // ListObjectsV2 max-keys for readdir
  // A listed object small enough to be a symbolic link's body (1 to 4095
  // bytes) is asked its type (HeadObject: LIST carries no metadata) before it
  // is shown with attributes. false (--no-link-probe): such objects are
  // regular files unless a HEAD said otherwise; links made elsewhere then
  // show as links only once a lookup asks S3 (docs/SEMANTICS.md).
  bool probe_link_types = true;
  // --preserve-attrs: mode, uid, gid and mtime are kept in user metadata
  // (s3fs's x-amz-meta-mode/-uid/-gid/-mtime): stat shows them, chmod, chown
  // and utimes store them (a CopyObject onto itself). Every listed file is
  // then asked its metadata (a HEAD) at its first lookup.
  bool preserve_attrs = false;

  // --- Threads and caches
  int max_threads = 16;  // FUSE worker threads (max_idle_threads)
  // Random reads whose GET runs on the FUSE thread that asked (prefetch
  // max_fetches_on_caller), at most max_threads - 2; 0: on transport threads.
  int gets_on_fuse_threads = 0;
  std::string cache_dir;  // "" = no disk cache
  // Object data is cached under cache_dir/data too (cache/data_cache.h);
  // false (--no-data-cache): only metadata.
  bool data_cache = true;
  // The data cache's size limit: max_cache_bytes when above 0, else
  // max_cache_percent of the file system holding cache_dir (--max-cache-size).
  uint64_t max_cache_bytes = 0;
  double max_cache_percent = 10;
  // When the cache's disk writes slower than the store delivers: false
  // (--cache-fill complete) paces readers to the disk so that every byte
  // read is cached; true (best-effort): readers are never held for the disk
  // and what it could not take is fetched and filled on a later read.
  bool cache_fill_best_effort = false;
  // Read-only opens of fully cached, verified objects are handed to the
  // kernel (FUSE passthrough) when it allows; false (--no-passthrough): the
  // daemon serves them from the cache.
  bool passthrough = true;
  // Names the server in the metadata cache's keys (the endpoint URL), so that
  // mounts of different servers can share one cache directory.
  std::string cache_scope;
};

}  // namespace bucketfs::fs
