// FileReader: how the core reads the bytes of one open object version.
//
// The core opens one FileReader per open file handle and routes every read(2)
// of that handle to it. DirectReader (below) issues one ranged GetObject per
// read, pinned to the ETag seen at open with If-Match, so a changed object
// fails the read (EIO) instead of mixing versions. The prefetcher (prefetch/)
// provides a FileReaderFactory of its own to replace it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cache/data_cache.h"
#include "s3/object_client.h"
#include "s3/object_version.h"
#include "s3/result.h"

namespace bucketfs::fs {

using s3::ObjectVersion;

// The bytes of one read as segments, valid only while the callback runs
// (so the FUSE edge can reply without copying). `error` is null on success.
using ReadDone =
    std::function<void(const Error* error, std::span<const std::span<const std::byte>> data)>;

class FileReader {
 public:
  virtual ~FileReader() = default;
  // Reads up to dest.size() bytes at `offset`; returns the count, 0 at or
  // past the end of the object. Called from several threads at once.
  virtual Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) = 0;
  // Reads up to `size` bytes at `offset` and hands them to `done` as segments
  // where they lie (no copy into a caller's buffer); `done` runs exactly once,
  // on this thread or another. The default calls Read on this thread.
  virtual void ReadSegments(uint64_t offset, size_t size, ReadDone&& done);
};

class FileReaderFactory {
 public:
  virtual ~FileReaderFactory() = default;
  virtual std::unique_ptr<FileReader> Open(const ObjectVersion& version) = 0;
  // The files likely to be opened next, nearest first (file-level prefetch).
  // The default ignores them.
  virtual void HintNextFiles(const std::vector<ObjectVersion>& /*next*/) {}
  // Returns once every ReadSegments answer of this factory's readers was given.
  // The mount calls it (through Filesystem::Shutdown) before its FUSE session
  // is destroyed: a read still waiting for a fetch when a signal ended the
  // loop would otherwise answer on a freed session.
  virtual void Quiesce() {}
  // A local file holding every byte of `version`, verified since it was last
  // written, pinned while the result lives (FUSE passthrough); null when
  // there is none. The default has no local copies.
  virtual std::shared_ptr<cache::CachedFile> VerifiedCopy(const ObjectVersion& /*version*/) {
    return nullptr;
  }
};

// A factory of readers that issue one ranged GET per read.
std::shared_ptr<FileReaderFactory> MakeDirectReaderFactory(
    std::shared_ptr<s3::ObjectClient> client);

}  // namespace bucketfs::fs
