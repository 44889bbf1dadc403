// FileWriter: how the core turns the writes of one open file into an object.
// The mount's writer is upload/'s StagedUpload behind the glue in
// fuse/staged_writer_factory.h: writes at any offset, staged on local disk,
// sent as a multipart upload part by part.
//
// Sync makes every byte written so far an object in S3 and leaves the file
// writable (the next write builds the next version). Commit is idempotent:
// it runs once and every later call returns the same result. After Commit,
// Write fails with EBADF. Abort drops an unfinished upload (no object is
// created, multipart parts are discarded). Read serves the file's current
// bytes to every handle of a file being written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "s3/object_client.h"
#include "s3/result.h"
#include "upload/upload_context.h"

namespace bucketfs::fs {

// The object a writer wrote, and the one it starts from when a file is
// opened for writing without O_TRUNC (append, in-place change).
using upload::BaseObject;
using upload::CommittedObject;
using upload::WriterOptions;

class FileWriter {
 public:
  virtual ~FileWriter() = default;
  // Thread-safe. Writes at any offset; a hole reads as zeros.
  virtual Status Write(uint64_t offset, std::span<const std::byte> data) = 0;
  // Bytes accepted so far: the size the file shows while it is written.
  virtual uint64_t size() const = 0;
  // Thread-safe. Fills `dest` from `offset` with the file's bytes as written
  // so far; short only at the end. Writers that cannot: EBADF.
  virtual Result<size_t> Read(uint64_t /*offset*/, std::span<std::byte> /*dest*/) {
    return MakeError(EBADF, "WriteOnly", "file is open for writing only");
  }
  // Reads may need the object in S3 (opened over it, or synced): an unlink
  // keeps it until the last close.
  virtual bool ReadsObject() const { return false; }
  // Writers that cannot keep writing after it commit for good.
  virtual Result<CommittedObject> Sync() { return Commit(); }
  virtual Result<CommittedObject> Commit() = 0;
  virtual void Abort() = 0;
  // Sets the file's size (ftruncate while writing). Writers that cannot:
  // ENOTSUP.
  virtual Status Truncate(uint64_t /*size*/) {
    return MakeError(ENOTSUP, "Truncate", "cannot resize a file while it is written");
  }
};

// What the writers of one mount hold, for metrics: part buffers in memory
// and bytes in staging files on disk.
struct WriteBackUsage {
  uint64_t buffer_bytes = 0;
  uint64_t buffer_limit = 0;
  uint64_t staging_bytes = 0;
};

class FileWriterFactory {
 public:
  virtual ~FileWriterFactory() = default;
  // Thread-safe. Factories that keep no accounting report zeros.
  virtual WriteBackUsage usage() const { return {}; }
  virtual std::unique_ptr<FileWriter> Create(const std::string& bucket, const std::string& key) = 0;
  // A writer whose file starts as `base` (s3://bucket/key as it is now).
  // Null when this factory cannot modify existing objects.
  virtual std::unique_ptr<FileWriter> CreateFrom(const std::string& /*bucket*/,
                                                 const std::string& /*key*/,
                                                 const BaseObject& /*base*/) {
    return nullptr;
  }
};

}  // namespace bucketfs::fs
