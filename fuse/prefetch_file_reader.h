// PrefetchReaderFactory: the core's FileReader seam (fuse/file_reader.h) over
// the read path of prefetch/. Each open read handle gets one
// prefetch::ObjectReader: sequential streams with a growing window of parallel
// ranged GETs, random reads at a floor with a small block cache, small objects
// fetched whole, all within the Prefetcher's memory budget, every GET pinned
// to the ETag seen at open (a changed object fails reads with EIO).
//
// FileReader::Read is blocking and copies once from the prefetch buffer into
// the caller's; the zero-copy path is reader(fh)->ReadAsync (see
// prefetch/object_reader.h) replying with fuse_reply_iov from the callback.
//
// HintNextFiles: call on open with the next siblings in directory order so
// many-small-file readers find the next files already on their way.
#pragma once

#include <memory>
#include <vector>

#include "fuse/file_reader.h"
#include "prefetch/prefetcher.h"

namespace bucketfs::fs {

class PrefetchFileReader : public FileReader {
 public:
  explicit PrefetchFileReader(std::unique_ptr<prefetch::ObjectReader> reader);
  ~PrefetchFileReader() override;  // closes the reader: its buffers return at once

  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) override;

  // The async, zero-copy form for the FUSE edge.
  prefetch::ObjectReader& object_reader() { return *reader_; }

 private:
  const std::unique_ptr<prefetch::ObjectReader> reader_;
};

class PrefetchReaderFactory : public FileReaderFactory {
 public:
  // REQUIRES: prefetcher != nullptr
  explicit PrefetchReaderFactory(std::shared_ptr<prefetch::Prefetcher> prefetcher);

  std::unique_ptr<FileReader> Open(const ObjectVersion& version) override;
  void HintNextFiles(const std::vector<ObjectVersion>& next);

  prefetch::Prefetcher& prefetcher() { return *prefetcher_; }

 private:
  const std::shared_ptr<prefetch::Prefetcher> prefetcher_;
};

prefetch::ObjectVersion ToPrefetchVersion(const ObjectVersion& v);

// A factory over a Prefetcher built from `config` on `client` (ranged GETs
// with If-Match through ObjectClientRangeSource).
std::shared_ptr<PrefetchReaderFactory> MakePrefetchReaderFactory(
    std::shared_ptr<s3::ObjectClient> client, const prefetch::PrefetchConfig& config);

}  // namespace bucketfs::fs
