// LocalNamespace: the names that exist in this mount but not (yet) in S3:
// directories made by mkdir without a marker object, and files being written
// (created or truncated, not yet committed). Lookup, getattr and readdir
// consult it so such names behave like any other until they reach S3.
//
// Keys are full S3 keys: a directory's ends in "/". Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fuse/dir_listing.h"
#include "fuse/file_writer.h"

namespace bucketfs::fs {

class LocalNamespace {
 public:
  void AddDir(const std::string& bucket, const std::string& dir_key);
  bool HasDir(const std::string& bucket, const std::string& dir_key) const;
  void RemoveDir(const std::string& bucket, const std::string& dir_key);

  // A file being written; its size is the writer's.
  void AddFile(const std::string& bucket, const std::string& key,
               std::shared_ptr<FileWriter> writer);
  // Removes the entry only if it still belongs to `writer`.
  void RemoveFile(const std::string& bucket, const std::string& key, const FileWriter* writer);
  // Moves the entry of a file being written to another key (a rename while
  // its upload runs).
  void MoveFile(const std::string& bucket, const std::string& key, const std::string& to_bucket,
                const std::string& to_key);
  // The writer of a file being written, if `key` is one: other handles of
  // the file read and write through it.
  std::shared_ptr<FileWriter> Writer(const std::string& bucket, const std::string& key) const;
  // Attributes of a file being written, if `key` is one.
  std::optional<ObjectAttrs> FileAttrs(const std::string& bucket, const std::string& key) const;

  // Direct children of `dir_key` (names only, one level).
  std::vector<ListedEntry> ChildrenOf(const std::string& bucket, const std::string& dir_key) const;
  // True when anything local lives under `dir_key` (any depth).
  bool HasAnythingUnder(const std::string& bucket, const std::string& dir_key) const;

  // True when a file under `dir_key` (any depth) is being written.
  bool HasFilesUnder(const std::string& bucket, const std::string& dir_key) const;

  // Moves every local directory under `from` (itself included) to `to`.
  void RenameDirs(const std::string& bucket, const std::string& from, const std::string& to_bucket,
                  const std::string& to);

 private:
  struct LocalFile {
    std::shared_ptr<FileWriter> writer;
    std::chrono::system_clock::time_point created;
  };
  using Key = std::pair<std::string, std::string>;  // bucket, key

  mutable Mutex mu_;
  std::set<Key> dirs_ GUARDED_BY(mu_);
  std::map<Key, LocalFile> files_ GUARDED_BY(mu_);
};

}  // namespace bucketfs::fs
