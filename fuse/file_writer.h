// FileWriter: how the core turns the writes of one open file into an object.
//
// SequentialUploadWriter (MakeSequentialWriterFactory) accepts writes at the
// end of the file only: bytes fill a part buffer; a full part starts (or
// continues) a multipart upload with UploadPartAsync, a few parts in flight;
// Commit uploads the rest and completes the upload, or does one PutObject when
// the file never filled a part. A write anywhere else fails with EINVAL (the
// write-back issue replaces this writer with one that stages to disk).
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
  // Thread-safe. REQUIRES (this writer): offset == size().
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

std::shared_ptr<FileWriterFactory> MakeSequentialWriterFactory(
    std::shared_ptr<s3::ObjectClient> client, WriterOptions options);

// Part size for part `part_number` (1-based): `base` for the first 1000 parts,
// then doubling every 1000 parts (capped at 5 GiB), so 10000 parts reach far
// past S3's 5 TiB object limit.
uint64_t PartSizeFor(uint64_t base, int part_number);

}  // namespace bucketfs::fs
