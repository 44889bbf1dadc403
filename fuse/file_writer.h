// FileWriter: how the core turns the writes of one open file into an object.
// The mount's writer is the StagedWriter (fuse/staged_writer.h): writes at
// any offset, staged on local disk, sent as a multipart upload part by part.
//
// Commit is idempotent: it runs once and every later call returns the same
// result. After Commit, Write fails with EBADF. Abort drops an unfinished
// upload (no object is created, multipart parts are discarded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::fs {

struct CommittedObject {
  std::string etag;
  uint64_t size = 0;
};

class FileWriter {
 public:
  virtual ~FileWriter() = default;
  // Thread-safe. Writes at any offset; a hole reads as zeros.
  virtual Status Write(uint64_t offset, std::span<const std::byte> data) = 0;
  // Bytes accepted so far: the size the file shows while it is written.
  virtual uint64_t size() const = 0;
  virtual Result<CommittedObject> Commit() = 0;
  virtual void Abort() = 0;
  // Sets the file's size (ftruncate while writing). Writers that cannot:
  // ENOTSUP.
  virtual Status Truncate(uint64_t /*size*/) {
    return MakeError(ENOTSUP, "Truncate", "cannot resize a file while it is written");
  }
};

// The object a writer starts from when a file is opened for writing without
// O_TRUNC (append, in-place change).
struct BaseObject {
  std::string etag;
  uint64_t size = 0;
};

struct WriterOptions {
  uint64_t part_size = 16ull << 20;  // first part size; grows to stay within 10000 parts
  int max_parts_in_flight = 4;
  // What each body carries for the server to verify. Uploads over an existing
  // object (UploadPartCopy of unchanged parts) always use MD5.
  s3::BodyChecksum checksum = s3::BodyChecksum::kCrc32c;
};

class FileWriterFactory {
 public:
  virtual ~FileWriterFactory() = default;
  virtual std::unique_ptr<FileWriter> Create(const std::string& bucket, const std::string& key) = 0;
  // A writer whose file starts as `base` (s3://bucket/key as it is now).
  // Null when this factory cannot modify existing objects.
  virtual std::unique_ptr<FileWriter> CreateFrom(const std::string& /*bucket*/,
                                                 const std::string& /*key*/,
                                                 const BaseObject& /*base*/) {
    return nullptr;
  }
};

// Part size for part `part_number` (1-based): `base` for the first 1000 parts,
// then doubling every 1000 parts (capped at 5 GiB), so 10000 parts reach far
// past S3's 5 TiB object limit.
uint64_t PartSizeFor(uint64_t base, int part_number);

}  // namespace bucketfs::fs
