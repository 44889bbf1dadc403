#include "s3/testing/fake_object_client.h"

#include <algorithm>
#include <cstring>

#include "s3/crc32c.h"

namespace bucketfs::s3::testing {
namespace {

Error NotFound(const std::string& what) { return MakeError(ENOENT, "NoSuchKey", what); }

std::string ToString(std::span<const std::byte> body) {
  return std::string(reinterpret_cast<const char*>(body.data()), body.size());
}

}  // namespace

void FakeObjectClient::Hold(const std::string& op) {
  MutexLock lock(hold_mu_);
  held_.insert(op);
}

void FakeObjectClient::Release(const std::string& op) {
  {
    MutexLock lock(hold_mu_);
    held_.erase(op);
  }
  hold_cv_.NotifyAll();
}

void FakeObjectClient::WaitWhileHeld(const std::string& op) {
  MutexLock lock(hold_mu_);
  ++waiting_[op];
  while (held_.count(op) != 0) hold_cv_.Wait(hold_mu_);
  --waiting_[op];
}

int FakeObjectClient::Waiting(const std::string& op) {
  MutexLock lock(hold_mu_);
  return waiting_[op];
}

std::optional<Error> FakeObjectClient::Enter(const std::string& op) {
  ++calls_[op];
  auto it = fail_next_.find(op);
  if (it == fail_next_.end()) return std::nullopt;
  Error e = MakeError(it->second, "Injected", op + " failed (injected)");
  e.request_id = "FAKE-REQUEST-ID";
  fail_next_.erase(it);
  return e;
}

Result<FakeObjectClient::Bucket*> FakeObjectClient::FindBucket(const std::string& bucket) {
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return MakeError(ENOENT, "NoSuchBucket", bucket);
  return &it->second;
}

FakeObjectClient::Object& FakeObjectClient::Store(Bucket& b, const std::string& key,
                                                  std::string data) {
  Object& o = b[key];
  o.data = std::move(data);
  o.etag = "\"etag-" + std::to_string(next_etag_++) + "\"";
  o.mtime = std::chrono::system_clock::now();
  o.metadata.clear();
  return o;
}

void FakeObjectClient::CreateBucketNamed(const std::string& bucket) {
  MutexLock lock(mu_);
  buckets_[bucket];
}

void FakeObjectClient::Put(const std::string& bucket, const std::string& key,
                           const std::string& data) {
  MutexLock lock(mu_);
  Store(buckets_[bucket], key, data);
}

void FakeObjectClient::PutWithMetadata(const std::string& bucket, const std::string& key,
                                       const std::string& data, const s3::UserMetadata& metadata) {
  MutexLock lock(mu_);
  Store(buckets_[bucket], key, data).metadata = metadata;
}

s3::UserMetadata FakeObjectClient::Metadata(const std::string& bucket,
                                            const std::string& key) const {
  MutexLock lock(mu_);
  return buckets_.at(bucket).at(key).metadata;
}

bool FakeObjectClient::Exists(const std::string& bucket, const std::string& key) const {
  MutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  return b != buckets_.end() && b->second.count(key);
}

std::string FakeObjectClient::Data(const std::string& bucket, const std::string& key) const {
  MutexLock lock(mu_);
  return buckets_.at(bucket).at(key).data;
}

std::vector<std::string> FakeObjectClient::Keys(const std::string& bucket) const {
  MutexLock lock(mu_);
  std::vector<std::string> keys;
  for (const auto& [k, o] : buckets_.at(bucket)) keys.push_back(k);
  return keys;
}

int FakeObjectClient::Calls(const std::string& op) const {
  MutexLock lock(mu_);
  auto it = calls_.find(op);
  return it == calls_.end() ? 0 : it->second;
}

size_t FakeObjectClient::OpenUploads() const {
  MutexLock lock(mu_);
  return uploads_.size();
}

void FakeObjectClient::FailNext(const std::string& op, int errno_value) {
  MutexLock lock(mu_);
  fail_next_[op] = errno_value;
}

void FakeObjectClient::SetCopyReportsCrc32c(bool on) {
  MutexLock lock(mu_);
  copy_reports_crc32c_ = on;
}

std::vector<s3::BodyChecksum> FakeObjectClient::UploadChecksums() const {
  MutexLock lock(mu_);
  return upload_checksums_;
}

Result<s3::HeadObjectResult> FakeObjectClient::HeadObject(const s3::HeadObjectParams& p) {
  WaitWhileHeld("HeadObject");
  MutexLock lock(mu_);
  if (auto e = Enter("HeadObject")) return *e;
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  auto it = (*b)->find(p.key);
  if (it == (*b)->end()) return NotFound(p.key);
  return s3::HeadObjectResult{it->second.data.size(), it->second.mtime, it->second.etag, "",
                              it->second.metadata};
}

Result<s3::GetObjectResult> FakeObjectClient::GetObject(const s3::GetObjectParams& p,
                                                        std::span<std::byte> dest) {
  MutexLock lock(mu_);
  if (auto e = Enter("GetObject")) return *e;
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  auto it = (*b)->find(p.key);
  if (it == (*b)->end()) return NotFound(p.key);
  const Object& o = it->second;
  if (!p.if_match.empty() && p.if_match != o.etag) {
    return MakeError(EIO, "PreconditionFailed", "ETag changed");
  }
  uint64_t offset = p.offset.value_or(0);
  uint64_t length = p.length.value_or(o.data.size() - std::min<uint64_t>(offset, o.data.size()));
  if (offset >= o.data.size() && length > 0) return MakeError(EINVAL, "InvalidRange", p.key);
  length = std::min<uint64_t>(length, o.data.size() - offset);
  if (p.length && length < *p.length) {
    // As the real client: a ranged GET fills the whole buffer or fails.
    return MakeError(EIO, "ShortBody", p.key + ": the object ends before the range asked for");
  }
  if (length > dest.size()) return MakeError(EINVAL, "SmallBuffer", "dest too small");
  std::memcpy(dest.data(), o.data.data() + offset, length);
  return s3::GetObjectResult{length, o.data.size(), o.etag, o.mtime};
}

void FakeObjectClient::GetObjectAsync(const s3::GetObjectParams& p, std::span<std::byte> dest,
                                      std::function<void(Result<s3::GetObjectResult>)> done) {
  done(GetObject(p, dest));
}

Result<s3::PutObjectResult> FakeObjectClient::PutObject(const s3::PutObjectParams& p,
                                                        std::span<const std::byte> body) {
  WaitWhileHeld("PutObject");
  MutexLock lock(mu_);
  if (auto e = Enter("PutObject")) return *e;
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  Object& o = Store(**b, p.key, ToString(body));
  o.metadata = p.metadata;
  return s3::PutObjectResult{o.etag};
}

Result<s3::CreateMultipartUploadResult> FakeObjectClient::CreateMultipartUpload(
    const s3::CreateMultipartUploadParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("CreateMultipartUpload")) return *e;
  if (!FindBucket(p.bucket).ok()) return MakeError(ENOENT, "NoSuchBucket", p.bucket);
  std::string id = "upload-" + std::to_string(next_upload_++);
  uploads_[id] = Upload{p.bucket, p.key, p.checksum, {}, p.metadata};
  upload_checksums_.push_back(p.checksum);
  return s3::CreateMultipartUploadResult{id};
}

Result<s3::UploadPartResult> FakeObjectClient::UploadPart(const s3::UploadPartParams& p,
                                                          std::span<const std::byte> body) {
  MutexLock lock(mu_);
  if (auto e = Enter("UploadPart")) return *e;
  auto it = uploads_.find(p.upload_id);
  if (it == uploads_.end()) return MakeError(ENOENT, "NoSuchUpload", p.upload_id);
  // Like S3: a sum the caller computed must match the body it sent.
  if ((p.checksum == s3::BodyChecksum::kCrc32c) !=
      (it->second.checksum == s3::BodyChecksum::kCrc32c)) {
    return MakeError(EINVAL, "InvalidRequest", "the part's checksum type is not the upload's");
  }
  std::string crc;
  if (p.checksum == s3::BodyChecksum::kCrc32c) {
    crc = s3::Crc32cBase64(body);
    if (!p.crc32c.empty() && p.crc32c != crc) {
      return MakeError(EIO, "BadDigest", "x-amz-checksum-crc32c does not match the body");
    }
  }
  it->second.parts[p.part_number] = ToString(body);
  return s3::UploadPartResult{"\"part-" + std::to_string(p.part_number) + "\"", crc};
}

void FakeObjectClient::UploadPartAsync(const s3::UploadPartParams& p,
                                       std::span<const std::byte> body,
                                       std::function<void(Result<s3::UploadPartResult>)> done) {
  done(UploadPart(p, body));
}

Result<s3::UploadPartResult> FakeObjectClient::UploadPartCopy(const s3::UploadPartCopyParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("UploadPartCopy")) return *e;
  auto it = uploads_.find(p.upload_id);
  if (it == uploads_.end()) return MakeError(ENOENT, "NoSuchUpload", p.upload_id);
  auto b = FindBucket(p.source_bucket);
  if (!b.ok()) return b.error();
  auto src = (*b)->find(p.source_key);
  if (src == (*b)->end()) return NotFound(p.source_key);
  const std::string& d = src->second.data;
  std::string& part = it->second.parts[p.part_number];
  part = d.substr(p.source_offset.value_or(0), p.source_length.value_or(d.size()));
  std::string crc;
  if (it->second.checksum == s3::BodyChecksum::kCrc32c && copy_reports_crc32c_) {
    crc = s3::Crc32cBase64(std::as_bytes(std::span(part.data(), part.size())));
  }
  return s3::UploadPartResult{"\"part-" + std::to_string(p.part_number) + "\"", crc};
}

Result<s3::CompleteMultipartUploadResult> FakeObjectClient::CompleteMultipartUpload(
    const s3::CompleteMultipartUploadParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("CompleteMultipartUpload")) return *e;
  auto it = uploads_.find(p.upload_id);
  if (it == uploads_.end()) return MakeError(ENOENT, "NoSuchUpload", p.upload_id);
  std::string data;
  int previous = 0;
  for (const auto& part : p.parts) {
    if (part.part_number <= previous) return MakeError(EINVAL, "InvalidPartOrder", "");
    previous = part.part_number;
    auto d = it->second.parts.find(part.part_number);
    if (d == it->second.parts.end()) return MakeError(EINVAL, "InvalidPart", "");
    // Like S3: an upload created with CRC32C needs every part's sum.
    if (it->second.checksum == s3::BodyChecksum::kCrc32c &&
        part.checksum_crc32c !=
            s3::Crc32cBase64(std::as_bytes(std::span(d->second.data(), d->second.size())))) {
      return MakeError(EINVAL, part.checksum_crc32c.empty() ? "InvalidRequest" : "InvalidPart",
                       "part " + std::to_string(part.part_number) + ": wrong or no CRC32C");
    }
    data += d->second;
  }
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  Object& stored = Store(**b, p.key, std::move(data));
  stored.metadata = it->second.metadata;
  std::string etag = stored.etag;
  uploads_.erase(it);
  return s3::CompleteMultipartUploadResult{etag};
}

Status FakeObjectClient::AbortMultipartUpload(const s3::AbortMultipartUploadParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("AbortMultipartUpload")) return *e;
  uploads_.erase(p.upload_id);
  return Status::Ok();
}

Result<s3::ListMultipartUploadsResult> FakeObjectClient::ListMultipartUploads(
    const s3::ListMultipartUploadsParams& /*p*/) {
  MutexLock lock(mu_);
  if (auto e = Enter("ListMultipartUploads")) return *e;
  s3::ListMultipartUploadsResult r;
  for (const auto& [id, u] : uploads_) r.uploads.push_back({u.key, id, {}});
  return r;
}

Result<s3::ListObjectsV2Result> FakeObjectClient::ListObjectsV2(const s3::ListObjectsV2Params& p) {
  WaitWhileHeld("ListObjectsV2");
  MutexLock lock(mu_);
  if (auto e = Enter("ListObjectsV2")) return *e;
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  s3::ListObjectsV2Result r;
  // The continuation token is the last key or prefix returned.
  const std::string after = p.continuation_token.empty() ? p.start_after : p.continuation_token;
  int count = 0;
  for (auto it = (*b)->lower_bound(p.prefix); it != (*b)->end(); ++it) {
    const std::string& key = it->first;
    if (key.compare(0, p.prefix.size(), p.prefix) != 0) break;
    std::string item = key;
    bool is_prefix = false;
    if (!p.delimiter.empty()) {
      auto d = key.find(p.delimiter, p.prefix.size());
      if (d != std::string::npos) {
        item = key.substr(0, d + p.delimiter.size());
        is_prefix = true;
      }
    }
    if (!after.empty() && item <= after) continue;
    if (is_prefix && !r.common_prefixes.empty() && r.common_prefixes.back() == item) continue;
    if (count == p.max_keys) {
      r.is_truncated = true;
      break;
    }
    ++count;
    if (is_prefix) {
      r.common_prefixes.push_back(item);
      r.next_continuation_token = item;
    } else {
      r.objects.push_back({key, it->second.data.size(), it->second.mtime, it->second.etag, ""});
      r.next_continuation_token = key;
    }
  }
  if (!r.is_truncated) r.next_continuation_token.clear();
  return r;
}

Result<s3::ListBucketsResult> FakeObjectClient::ListBuckets() {
  MutexLock lock(mu_);
  if (auto e = Enter("ListBuckets")) return *e;
  s3::ListBucketsResult r;
  for (const auto& [name, b] : buckets_) r.buckets.push_back({name, {}});
  return r;
}

Status FakeObjectClient::DeleteObject(const s3::DeleteObjectParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("DeleteObject")) return *e;
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  (*b)->erase(p.key);
  return Status::Ok();
}

Result<s3::DeleteObjectsResult> FakeObjectClient::DeleteObjects(const s3::DeleteObjectsParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("DeleteObjects")) return *e;
  auto b = FindBucket(p.bucket);
  if (!b.ok()) return b.error();
  s3::DeleteObjectsResult r;
  for (const auto& k : p.keys) {
    (*b)->erase(k);
    r.deleted.push_back(k);
  }
  return r;
}

Result<s3::CopyObjectResult> FakeObjectClient::CopyObject(const s3::CopyObjectParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("CopyObject")) return *e;
  auto src_b = FindBucket(p.source_bucket);
  if (!src_b.ok()) return src_b.error();
  auto src = (*src_b)->find(p.source_key);
  if (src == (*src_b)->end()) return NotFound(p.source_key);
  if (!p.source_if_match.empty() && p.source_if_match != src->second.etag) {
    return MakeError(EIO, "PreconditionFailed", "source changed");
  }
  auto dst_b = FindBucket(p.bucket);
  if (!dst_b.ok()) return dst_b.error();
  std::string data = src->second.data;
  s3::UserMetadata metadata = p.replace_metadata ? *p.replace_metadata : src->second.metadata;
  Object& o = Store(**dst_b, p.key, std::move(data));
  o.metadata = std::move(metadata);
  return s3::CopyObjectResult{o.etag, o.mtime};
}

Status FakeObjectClient::CreateBucket(const s3::CreateBucketParams& p) {
  MutexLock lock(mu_);
  if (auto e = Enter("CreateBucket")) return *e;
  buckets_[p.bucket];
  return Status::Ok();
}

}  // namespace bucketfs::s3::testing
