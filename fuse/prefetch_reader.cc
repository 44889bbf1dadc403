#include "fuse/prefetch_reader.h"

#include <spdlog/spdlog.h>

namespace bucketfs::fs {
namespace {

class PrefetchReader : public FileReader {
 public:
  PrefetchReader(std::shared_ptr<prefetch::Prefetcher> prefetcher,
                 std::unique_ptr<prefetch::ObjectReader> reader)
      : prefetcher_(std::move(prefetcher)), reader_(std::move(reader)) {}
  ~PrefetchReader() override {
    reader_->Close();
    if (spdlog::should_log(spdlog::level::debug)) {
      const auto st = reader_->stats();
      spdlog::debug(
          "closed s3://{}/{}: {} reads ({} waited), {} fetches of {} bytes, {} stream "
          "starts, {} seeks, {} bytes past the budget",
          reader_->object().bucket, reader_->object().key, st.reads, st.waited_reads, st.fetches,
          st.bytes_fetched, st.stream_starts, st.seeks, st.forced_bytes);
    }
  }

  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) override {
    auto r = reader_->Read(offset, dest);
    if (!r.ok()) Log(offset, dest.size(), r.error());
    return r;
  }

  void ReadAsync(uint64_t offset, size_t size, ReadDone done) override {
    reader_->ReadAsync(offset, size,
                       [this, offset, size, done = std::move(done)](Result<prefetch::ReadData> r) {
                         if (!r.ok()) {
                           Log(offset, size, r.error());
                           return done(&r.error(), {});
                         }
                         done(nullptr, r->segments());
                       });
  }

 private:
  void Log(uint64_t offset, size_t size, const Error& e) const {
    const auto& o = reader_->object();
    spdlog::warn("read s3://{}/{} [{}, +{}): {}", o.bucket, o.key, offset, size, e.ToString());
  }

  const std::shared_ptr<prefetch::Prefetcher> prefetcher_;  // outlives reader_
  const std::unique_ptr<prefetch::ObjectReader> reader_;
};

class PrefetchReaderFactory : public FileReaderFactory {
 public:
  explicit PrefetchReaderFactory(std::shared_ptr<prefetch::Prefetcher> prefetcher)
      : prefetcher_(std::move(prefetcher)) {}
  std::unique_ptr<FileReader> Open(const ObjectVersion& v) override {
    return std::make_unique<PrefetchReader>(prefetcher_,
                                            prefetcher_->Open({v.bucket, v.key, v.etag, v.size}));
  }
  void HintNextFiles(const std::vector<ObjectVersion>& next) override {
    std::vector<prefetch::ObjectVersion> versions;
    versions.reserve(next.size());
    for (const auto& v : next) versions.push_back({v.bucket, v.key, v.etag, v.size});
    prefetcher_->HintNextFiles(versions);
  }

 private:
  const std::shared_ptr<prefetch::Prefetcher> prefetcher_;
};

}  // namespace

std::shared_ptr<FileReaderFactory> MakePrefetchReaderFactory(
    std::shared_ptr<prefetch::Prefetcher> prefetcher) {
  return std::make_shared<PrefetchReaderFactory>(std::move(prefetcher));
}

}  // namespace bucketfs::fs
