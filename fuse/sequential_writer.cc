// SequentialUploadWriter: streams sequential writes of a new object to S3 as
// a multipart upload (see file_writer.h).
//
// Locks: mu_ serializes Write/Commit/Abort and may be held across S3 calls;
// done_mu_ guards what upload completions (transport threads) touch, and is
// never held across a call. Order: mu_ before done_mu_.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "fuse/file_writer.h"
#include "fuse/thread_annotations.h"

namespace bucketfs::fs {

uint64_t PartSizeFor(uint64_t base, int part_number) {
  constexpr uint64_t kMaxPart = 5ull << 30;
  const int doublings = std::min((part_number - 1) / 1000, 20);
  return std::min(base << doublings, kMaxPart);
}

namespace {

class SequentialUploadWriter : public FileWriter {
 public:
  SequentialUploadWriter(std::shared_ptr<s3::ObjectClient> client, WriterOptions options,
                         std::string bucket, std::string key)
      : client_(std::move(client)),
        options_(options),
        bucket_(std::move(bucket)),
        key_(std::move(key)) {}

  ~SequentialUploadWriter() override {
    std::lock_guard lock(mu_);
    if (!committed_) AbortLocked();
    WaitForAllParts();  // completions must not outlive this object
  }

  uint64_t size() const override { return size_.load(std::memory_order_acquire); }

  Status Write(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(mu_);
    if (committed_) return MakeError(EBADF, "Committed", "file already flushed to " + key_);
    if (offset != size_.load()) {
      return MakeError(EINVAL, "NonSequentialWrite",
                       "only sequential writes of new files are supported (" + key_ + ")");
    }
    if (auto e = StickyError()) return *e;
    while (!data.empty()) {
      const uint64_t part_size = PartSizeFor(options_.part_size, next_part_);
      if (buffer_.capacity() < part_size) buffer_.reserve(part_size);
      const size_t n = std::min<size_t>(data.size(), part_size - buffer_.size());
      buffer_.insert(buffer_.end(), data.begin(), data.begin() + n);
      data = data.subspan(n);
      size_.fetch_add(n, std::memory_order_release);
      if (buffer_.size() == part_size) {
        Status s = StartPart();
        if (!s.ok()) return s;
      }
    }
    return Status::Ok();
  }

  Result<CommittedObject> Commit() override {
    std::lock_guard lock(mu_);
    if (!committed_) committed_ = CommitLocked();
    return *committed_;
  }

  void Abort() override {
    std::lock_guard lock(mu_);
    if (committed_) return;
    AbortLocked();
    committed_ = Result<CommittedObject>(MakeError(ECANCELED, "Aborted", "upload aborted"));
  }

 private:
  Result<CommittedObject> CommitLocked() REQUIRES(mu_) {
    const uint64_t total = size_.load();
    if (upload_id_.empty()) {
      s3::PutObjectParams p;
      p.bucket = bucket_;
      p.key = key_;
      auto r = client_->PutObject(p, buffer_);
      std::vector<std::byte>().swap(buffer_);
      if (!r.ok()) return Log("PutObject", r.error());
      return CommittedObject{r->etag, total};
    }
    if (!buffer_.empty()) {
      Status s = StartPart();
      if (!s.ok()) return s.error();
    }
    WaitForAllParts();
    if (auto e = StickyError()) {
      AbortLocked();
      return *e;
    }
    s3::CompleteMultipartUploadParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    {
      std::lock_guard done(done_mu_);
      for (const auto& [number, etag] : parts_) p.parts.push_back({number, etag});
    }
    auto r = client_->CompleteMultipartUpload(p);
    if (!r.ok()) {
      Log("CompleteMultipartUpload", r.error());
      AbortLocked();
      return r.error();
    }
    upload_id_.clear();
    return CommittedObject{r->etag, total};
  }

  // Sends buffer_ as the next part (creating the upload first if needed).
  Status StartPart() REQUIRES(mu_) {
    if (upload_id_.empty()) {
      s3::CreateMultipartUploadParams cp;
      cp.bucket = bucket_;
      cp.key = key_;
      auto r = client_->CreateMultipartUpload(cp);
      if (!r.ok()) return Log("CreateMultipartUpload", r.error());
      upload_id_ = r->upload_id;
    }
    {
      std::unique_lock done(done_mu_);
      cv_.wait(done, [&] { return in_flight_ < std::max(1, options_.max_parts_in_flight); });
      ++in_flight_;
    }
    auto body = std::make_shared<std::vector<std::byte>>(std::move(buffer_));
    buffer_ = {};
    s3::UploadPartParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    p.part_number = next_part_++;
    const int number = p.part_number;
    client_->UploadPartAsync(p, *body, [this, body, number](Result<s3::UploadPartResult> r) {
      std::lock_guard done(done_mu_);
      if (r.ok()) {
        parts_[number] = r->etag;
      } else if (!first_error_) {
        spdlog::warn("UploadPart {} of s3://{}/{}: {}", number, bucket_, key_,
                     r.error().ToString());
        first_error_ = r.error();
      }
      --in_flight_;
      cv_.notify_all();
    });
    return Status::Ok();
  }

  void WaitForAllParts() {
    std::unique_lock done(done_mu_);
    cv_.wait(done, [&] { return in_flight_ == 0; });
  }

  std::optional<Error> StickyError() {
    std::lock_guard done(done_mu_);
    return first_error_;
  }

  void AbortLocked() REQUIRES(mu_) {
    WaitForAllParts();
    if (upload_id_.empty()) return;
    s3::AbortMultipartUploadParams p;
    p.bucket = bucket_;
    p.key = key_;
    p.upload_id = upload_id_;
    Status s = client_->AbortMultipartUpload(p);
    if (!s.ok()) Log("AbortMultipartUpload", s.error());
    upload_id_.clear();
  }

  Error Log(const char* op, const Error& e) {
    spdlog::warn("{} s3://{}/{}: {}", op, bucket_, key_, e.ToString());
    return e;
  }

  const std::shared_ptr<s3::ObjectClient> client_;
  const WriterOptions options_;
  const std::string bucket_;
  const std::string key_;
  std::atomic<uint64_t> size_{0};

  std::mutex mu_;
  std::vector<std::byte> buffer_ GUARDED_BY(mu_);  // the part being filled
  std::string upload_id_ GUARDED_BY(mu_);          // empty until the first part is full
  int next_part_ GUARDED_BY(mu_) = 1;
  std::optional<Result<CommittedObject>> committed_ GUARDED_BY(mu_);

  std::mutex done_mu_;
  std::condition_variable cv_;
  int in_flight_ GUARDED_BY(done_mu_) = 0;
  std::map<int, std::string> parts_ GUARDED_BY(done_mu_);  // part number -> ETag
  std::optional<Error> first_error_ GUARDED_BY(done_mu_);
};

class SequentialWriterFactory : public FileWriterFactory {
 public:
  SequentialWriterFactory(std::shared_ptr<s3::ObjectClient> client, WriterOptions options)
      : client_(std::move(client)), options_(options) {}
  std::unique_ptr<FileWriter> Create(const std::string& bucket, const std::string& key) override {
    return std::make_unique<SequentialUploadWriter>(client_, options_, bucket, key);
  }

 private:
  const std::shared_ptr<s3::ObjectClient> client_;
  const WriterOptions options_;
};

}  // namespace

std::shared_ptr<FileWriterFactory> MakeSequentialWriterFactory(
    std::shared_ptr<s3::ObjectClient> client, WriterOptions options) {
  return std::make_shared<SequentialWriterFactory>(std::move(client), options);
}

}  // namespace bucketfs::fs
