// KeptUploads: on an --async-close mount, a local copy of each file whose
// upload runs in the background, made before the upload and removed when it
// succeeds. A failed upload leaves its bytes and a note of what they were
// for (bucket, key, size, the error) instead of losing them: close() has
// already told the application the file was fine.
//
// Layout, in one directory (0700, files 0600): NAME.data with the bytes and
// NAME.info with lines "s3://BUCKET/KEY", "size N" and, once it failed,
// "error ...". NAME is unique per daemon and never reused.
//
// Thread-safe: each copy is its own pair of files.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "s3/result.h"

namespace bucketfs::fs {

class KeptUploads {
 public:
  // Fills `dest` from `offset`; short only at the end of the file.
  using ReadFn = std::function<Result<size_t>(uint64_t offset, std::span<std::byte> dest)>;

  struct Copy {
    std::string data_path;
    std::string info_path;
  };

  explicit KeptUploads(std::string dir);

  const std::string& dir() const { return dir_; }
  // Copies the `size` bytes `read` serves. On an error nothing is left behind.
  Result<Copy> Keep(const std::string& bucket, const std::string& key, uint64_t size,
                    const ReadFn& read);
  // The upload succeeded: the copy goes.
  void Drop(const Copy& copy);
  // The upload failed: the copy stays, its note gains the error.
  void Failed(const Copy& copy, const Error& error);
  // Copies left by failed uploads since the mount started.
  uint64_t kept() const { return kept_.load(std::memory_order_relaxed); }

 private:
  const std::string dir_;
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> kept_{0};
};

}  // namespace bucketfs::fs
