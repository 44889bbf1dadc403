#include "fuse/prefetch_reader.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "base/task_runner.h"

namespace bucketfs::fs {
namespace {

class PrefetchReader : public FileReader {
 public:
  // `replies` (may be null: reply on the completing thread) outlives every
  // fetch of the reader (see PrefetchReaderFactory's destructor). `pin`
  // (may be null) is the object's data-cache file, kept from eviction while
  // the file is open.
  PrefetchReader(std::shared_ptr<prefetch::Prefetcher> prefetcher,
                 std::shared_ptr<prefetch::ObjectReader> reader, base::TaskRunner* replies,
                 std::shared_ptr<cache::CachedFile> pin)
      : prefetcher_(std::move(prefetcher)),
        reader_(std::move(reader)),
        replies_(replies),
        pin_(std::move(pin)) {}
  ~PrefetchReader() override {
    reader_->Close();
    if (spdlog::should_log(spdlog::level::debug)) {
      const auto st = reader_->stats();
      spdlog::debug(
          "closed s3://{}/{}: {} reads ({} waited), {} fetches of {} bytes, {} stream "
          "starts, {} seeks, {} bytes past the budget, {} re-reads of released pages ({} bytes "
          "fetched again){}",
          reader_->object().bucket, reader_->object().key, st.reads, st.waited_reads, st.fetches,
          st.bytes_fetched, st.stream_starts, st.seeks, st.forced_bytes, st.rereads,
          st.reread_bytes_fetched, st.holds_whole ? ", then held the whole object" : "");
    }
  }

  Result<size_t> Read(uint64_t offset, std::span<std::byte> dest) override {
    auto r = reader_->Read(offset, dest);
    if (!r.ok()) Log(offset, dest.size(), r.error());
    return r;
  }

  void ReadSegments(uint64_t offset, size_t size, ReadDone&& done) override {
    const std::thread::id caller = std::this_thread::get_id();
    reader_->ReadFromParts(
        offset, size,
        [this, offset, size, caller, done = std::move(done)](Result<prefetch::ReadData> r) mutable {
          if (replies_ == nullptr || std::this_thread::get_id() == caller) {
            return Reply(offset, size, done, r);
          }
          // Completed by a fetch, on a transport thread: a reply through the
          // page cache is a copy by the kernel, which that thread must not
          // make while its other sockets wait to be drained.
          auto pending = std::make_shared<std::pair<ReadDone, Result<prefetch::ReadData>>>(
              std::move(done), std::move(r));
          replies_->Post([this, offset, size, pending] {
            Reply(offset, size, pending->first, pending->second);
          });
        });
  }

 private:
  void Reply(uint64_t offset, size_t size, const ReadDone& done,
             const Result<prefetch::ReadData>& r) const {
    if (!r.ok()) {
      Log(offset, size, r.error());
      return done(&r.error(), {});
    }
    done(nullptr, r->segments());
  }

  void Log(uint64_t offset, size_t size, const Error& e) const {
    const auto& o = reader_->object();
    spdlog::warn("read s3://{}/{} [{}, +{}): {}", o.bucket, o.key, offset, size, e.ToString());
  }

  const std::shared_ptr<prefetch::Prefetcher> prefetcher_;  // outlives reader_
  const std::shared_ptr<prefetch::ObjectReader> reader_;
  base::TaskRunner* const replies_;
  const std::shared_ptr<cache::CachedFile> pin_;
};

class PrefetchReaderFactory : public FileReaderFactory {
 public:
  PrefetchReaderFactory(std::shared_ptr<prefetch::Prefetcher> prefetcher, int reply_threads,
                        std::shared_ptr<cache::DataCache> data_cache)
      : prefetcher_(std::move(prefetcher)),
        data_cache_(std::move(data_cache)),
        replies_(reply_threads > 0 ? std::make_unique<base::WorkerPool>(reply_threads) : nullptr) {}
  ~PrefetchReaderFactory() override {
    // No fetch completes after this, so no reader posts to replies_ any more;
    // destroying the pool then runs the replies still queued.
    prefetcher_->WaitIdle();
    replies_.reset();
  }
  PrefetchReaderFactory(const PrefetchReaderFactory&) = delete;
  PrefetchReaderFactory& operator=(const PrefetchReaderFactory&) = delete;

  std::unique_ptr<FileReader> Open(const ObjectVersion& v) override {
    // Pinned for the whole open, not only during each fetch: the cached
    // part of a file being read is not evicted between its reads.
    auto pin = data_cache_ != nullptr ? data_cache_->Acquire(v, /*create=*/true) : nullptr;
    return std::make_unique<PrefetchReader>(prefetcher_, prefetcher_->Open(v), replies_.get(),
                                            std::move(pin));
  }
  void Quiesce() override {
    // No fetch completes after WaitIdle, so nothing is posted to replies_
    // after it; Drain then waits for the answers already posted.
    prefetcher_->WaitIdle();
    if (replies_) replies_->Drain();
  }
  void HintNextFiles(const std::vector<ObjectVersion>& next) override {
    prefetcher_->HintNextFiles(next);
  }
  std::shared_ptr<cache::CachedFile> VerifiedCopy(const ObjectVersion& v) override {
    if (data_cache_ == nullptr) return nullptr;
    auto file = data_cache_->Acquire(v, /*create=*/false);
    if (file == nullptr || !file->VerifiedComplete()) return nullptr;
    return file;
  }

 private:
  const std::shared_ptr<prefetch::Prefetcher> prefetcher_;
  const std::shared_ptr<cache::DataCache> data_cache_;
  std::unique_ptr<base::WorkerPool> replies_;
};

}  // namespace

std::shared_ptr<FileReaderFactory> MakePrefetchReaderFactory(
    std::shared_ptr<prefetch::Prefetcher> prefetcher, int reply_threads,
    std::shared_ptr<cache::DataCache> data_cache) {
  return std::make_shared<PrefetchReaderFactory>(std::move(prefetcher), reply_threads,
                                                 std::move(data_cache));
}

}  // namespace bucketfs::fs
