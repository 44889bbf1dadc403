// DirectReader: one ranged, If-Match-pinned GetObject per read. Correct and
// simple; the prefetcher replaces it for throughput.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "fuse/file_reader.h"

namespace bucketfs::fs {

void FileReader::ReadSegments(uint64_t offset, size_t size, ReadDone&& done) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < size) buffer.resize(size);
  auto r = Read(offset, std::span(buffer.data(), size));
  if (!r.ok()) return done(&r.error(), {});
  const std::span<const std::byte> bytes(buffer.data(), *r);
  done(nullptr, std::span(&bytes, 1));
}

namespace {

class DirectReader : public FileReader {
 public:
  DirectReader(std::shared_ptr<s3::ObjectClient> client, ObjectVersion version)
      : client_(std::move(client)), version_(std::move(version)) {}

  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) override {
    if (offset >= version_.size || dest.empty()) return size_t{0};
    const uint64_t length = std::min<uint64_t>(dest.size(), version_.size - offset);
    auto r = client_->GetObject(s3::PinnedRangeGet(version_, offset, length), dest.first(length));
    if (!r.ok()) {
      spdlog::warn("GetObject s3://{}/{} [{}, +{}): {}", version_.bucket, version_.key, offset,
                   length, r.error().ToString());
      return r.error();
    }
    return static_cast<size_t>(r->bytes);
  }

 private:
  const std::shared_ptr<s3::ObjectClient> client_;
  const ObjectVersion version_;
};

class DirectReaderFactory : public FileReaderFactory {
 public:
  explicit DirectReaderFactory(std::shared_ptr<s3::ObjectClient> client)
      : client_(std::move(client)) {}
  std::unique_ptr<FileReader> Open(const ObjectVersion& version) override {
    return std::make_unique<DirectReader>(client_, version);
  }

 private:
  const std::shared_ptr<s3::ObjectClient> client_;
};

}  // namespace

std::shared_ptr<FileReaderFactory> MakeDirectReaderFactory(
    std::shared_ptr<s3::ObjectClient> client) {
  return std::make_shared<DirectReaderFactory>(std::move(client));
}

}  // namespace bucketfs::fs
