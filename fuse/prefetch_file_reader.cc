#include "fuse/prefetch_file_reader.h"

#include <utility>

#include "prefetch/object_client_range_source.h"

namespace bucketfs::fs {

prefetch::ObjectVersion ToPrefetchVersion(const ObjectVersion& v) {
  return prefetch::ObjectVersion{v.bucket, v.key, v.etag, v.size};
}

PrefetchFileReader::PrefetchFileReader(std::unique_ptr<prefetch::ObjectReader> reader)
    : reader_(std::move(reader)) {}

PrefetchFileReader::~PrefetchFileReader() { reader_->Close(); }

Result<size_t> PrefetchFileReader::Read(uint64_t offset, std::span<std::byte> dest) {
  return reader_->Read(offset, dest);
}

PrefetchReaderFactory::PrefetchReaderFactory(std::shared_ptr<prefetch::Prefetcher> prefetcher)
    : prefetcher_(std::move(prefetcher)) {}

std::unique_ptr<FileReader> PrefetchReaderFactory::Open(const ObjectVersion& version) {
  return std::make_unique<PrefetchFileReader>(prefetcher_->Open(ToPrefetchVersion(version)));
}

void PrefetchReaderFactory::HintNextFiles(const std::vector<ObjectVersion>& next) {
  std::vector<prefetch::ObjectVersion> versions;
  versions.reserve(next.size());
  for (const auto& v : next) versions.push_back(ToPrefetchVersion(v));
  prefetcher_->HintNextFiles(versions);
}

std::shared_ptr<PrefetchReaderFactory> MakePrefetchReaderFactory(
    std::shared_ptr<s3::ObjectClient> client, const prefetch::PrefetchConfig& config) {
  auto source = std::make_shared<prefetch::ObjectClientRangeSource>(std::move(client));
  return std::make_shared<PrefetchReaderFactory>(
      std::make_shared<prefetch::Prefetcher>(config, std::move(source)));
}

}  // namespace bucketfs::fs
