// Open-handle records of Filesystem (private to the fs_*.cc files).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "fuse/dir_listing.h"
#include "fuse/filesystem.h"

namespace bucketfs::fs {

struct Filesystem::FileHandle {
  Ino ino = 0;
  std::string bucket, key;
  std::unique_ptr<FileReader> reader;  // read handles
  std::shared_ptr<FileWriter> writer;  // write handles (one writer per file, shared)
  // Read handles of a file being written: its bytes come from the writer.
  std::shared_ptr<FileWriter> source;
  pid_t opener = 0;  // the process that opened it
  // Was writing when a previous daemon handed the mount over: its data is
  // gone, and every write, flush and fsync through it fails.
  bool lost = false;
  std::string etag;  // read handles: the version they read
  // Its name was unlinked: a reader's object is deleted at the last close
  // (set and read under handles_mu_); a writer's upload is abandoned.
  std::shared_ptr<UnlinkedObject> unlinked;
  std::atomic<bool> abandoned{false};
  std::atomic<bool> written{false};    // a write came through this handle
  std::atomic<bool> submitted{false};  // --async-close: its upload was handed to pending_
  // --async-close: a rename while the upload runs moves the name here and
  // chains the copy; CommitHandle then publishes nothing under the old name.
  Mutex publish_mu;
  bool published GUARDED_BY(publish_mu) = false;                // CommitHandle recorded the outcome
  bool moved GUARDED_BY(publish_mu) = false;                    // renamed while uploading
  std::optional<ObjectAttrs> committed GUARDED_BY(publish_mu);  // the uploaded object
  // --preserve-attrs: chmod/chown/utimes while written, stored after the upload.
  std::optional<ObjectAttrs> pending_attrs GUARDED_BY(publish_mu);
};

struct Filesystem::DirHandle {
  DirHandle(Ino i, std::string b, std::string k, bool list_buckets)
      : ino(i), bucket(std::move(b)), key(std::move(k)), bucket_list(list_buckets), listing(key) {}
  const Ino ino;
  const std::string bucket, key;
  const bool bucket_list;  // all-buckets root: entries are ListBuckets

  Mutex mu;  // the kernel serializes readdir per handle; this makes sure
  DirListing listing GUARDED_BY(mu);
  std::string token GUARDED_BY(mu);  // continuation token of the next page
  bool done GUARDED_BY(mu) = false;  // every page fetched, local entries merged
  std::chrono::steady_clock::time_point started GUARDED_BY(mu);  // the first page was asked
};

}  // namespace bucketfs::fs
