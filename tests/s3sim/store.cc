#include "tests/s3sim/store.h"

#include <algorithm>
#include <tuple>

#include "tests/s3sim/crc32c.h"
#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

S3Error InvalidPart() {
  return S3Error{400, "InvalidPart",
                 "One or more of the specified parts could not be found. The part may not have "
                 "been uploaded, or the specified entity tag may not have matched the part's "
                 "entity tag."};
}

// S3 checks a part's CRC32C in CompleteMultipartUpload as it checks its ETag:
// a value that is not the part's is InvalidPart; an upload created with
// CRC32C must name every part's.
std::optional<S3Error> CheckPartCrc32c(const Upload& upload, const CompletedPart& cp,
                                       const Part& stored) {
  if (!cp.crc32c) {
    if (ToLower(upload.checksum_algorithm) != "crc32c") return std::nullopt;
    return S3Error{400, "InvalidRequest",
                   "The upload was created using a crc32c checksum. The complete request must "
                   "include the checksum for each part. It was missing for part " +
                       std::to_string(cp.number) + " in the request."};
  }
  auto raw = Unbase64(*cp.crc32c);
  if (!raw || raw->size() != 4) return InvalidPart();
  // A part sent without the header has its sum computed now.
  const std::string actual = stored.crc32c.empty() ? Crc32cBase64(*stored.data) : stored.crc32c;
  if (Base64(*raw) != actual) return InvalidPart();  // compares bytes, not spellings
  return std::nullopt;
}

}  // namespace

bool Store::CreateBucket(const std::string& name) {
  bucketfs::WriterMutexLock lock(mu_);
  auto [it, inserted] = buckets_.try_emplace(name);
  if (inserted) it->second.created = std::time(nullptr);
  return inserted;
}

std::optional<S3Error> Store::DeleteBucket(const std::string& name) {
  bucketfs::WriterMutexLock lock(mu_);
  auto it = buckets_.find(name);
  if (it == buckets_.end()) return NoSuchBucket();
  if (!it->second.objects.empty()) {
    return S3Error{409, "BucketNotEmpty", "The bucket you tried to delete is not empty"};
  }
  buckets_.erase(it);
  return std::nullopt;
}

bool Store::BucketExists(const std::string& name) const {
  bucketfs::ReaderMutexLock lock(mu_);
  return buckets_.count(name) != 0;
}

std::vector<BucketInfo> Store::ListBuckets() const {
  bucketfs::ReaderMutexLock lock(mu_);
  std::vector<BucketInfo> out;
  for (const auto& [name, b] : buckets_) out.push_back({name, b.created});
  return out;
}

Expected<ObjectPtr> Store::Get(const std::string& bucket, const std::string& key) const {
  bucketfs::ReaderMutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return NoSuchBucket();
  auto o = b->second.objects.find(key);
  if (o == b->second.objects.end()) return NoSuchKey();
  return o->second;
}

std::optional<S3Error> Store::Put(const std::string& bucket, const std::string& key,
                                  ObjectPtr obj) {
  ObjectPtr old;  // released after the lock
  bucketfs::WriterMutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return NoSuchBucket();
  ObjectPtr& slot = b->second.objects[key];
  old = std::move(slot);
  slot = std::move(obj);
  return std::nullopt;
}

std::optional<S3Error> Store::Delete(const std::string& bucket, const std::string& key) {
  ObjectPtr old;
  bucketfs::WriterMutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return NoSuchBucket();
  auto o = b->second.objects.find(key);
  if (o != b->second.objects.end()) {
    old = std::move(o->second);
    b->second.objects.erase(o);
  }
  return std::nullopt;
}

Expected<ListPage> Store::List(const std::string& bucket, const ListParams& params) const {
  bucketfs::ReaderMutexLock lock(mu_);
  auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return NoSuchBucket();
  return ListKeys(b->second.objects, params);
}

Expected<std::string> Store::CreateUpload(const std::string& bucket, const std::string& key,
                                          std::string content_type, HeaderList metadata,
                                          std::string checksum_algorithm) {
  if (!BucketExists(bucket)) return NoSuchBucket();
  bucketfs::MutexLock lock(uploads_mu_);
  std::string id =
      Hex(Sha256(bucket + "/" + key + "/" + std::to_string(next_upload_++))).substr(0, 32);
  Upload& u = uploads_[id];
  u.bucket = bucket;
  u.key = key;
  u.id = id;
  u.initiated = std::time(nullptr);
  u.content_type = std::move(content_type);
  u.metadata = std::move(metadata);
  u.checksum_algorithm = std::move(checksum_algorithm);
  return id;
}

std::optional<S3Error> Store::PutPart(const std::string& bucket, const std::string& key,
                                      const std::string& upload_id, int number, Part part) {
  Part old;
  bucketfs::MutexLock lock(uploads_mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end() || it->second.bucket != bucket || it->second.key != key) {
    return NoSuchUpload();
  }
  Part& slot = it->second.parts[number];
  old = std::move(slot);
  slot = std::move(part);
  return std::nullopt;
}

Expected<ObjectPtr> Store::Complete(const std::string& bucket, const std::string& key,
                                    const std::string& upload_id,
                                    const std::vector<CompletedPart>& parts) {
  if (parts.empty()) {
    return S3Error{400, "MalformedXML", "You must specify at least one part"};
  }
  std::vector<Part> chosen;
  Upload meta;
  {
    bucketfs::MutexLock lock(uploads_mu_);
    auto it = uploads_.find(upload_id);
    if (it == uploads_.end() || it->second.bucket != bucket || it->second.key != key) {
      return NoSuchUpload();
    }
    int last = 0;
    for (const CompletedPart& cp : parts) {
      if (cp.number <= last) {
        return S3Error{400, "InvalidPartOrder",
                       "The list of parts was not in ascending order. The parts list must be "
                       "specified in order by part number."};
      }
      last = cp.number;
      auto p = it->second.parts.find(cp.number);
      if (p == it->second.parts.end() || Unquote(p->second.etag) != Unquote(cp.etag)) {
        return InvalidPart();
      }
      if (auto err = CheckPartCrc32c(it->second, cp, p->second)) return *err;
      chosen.push_back(p->second);
    }
    for (size_t i = 0; i + 1 < chosen.size(); ++i) {
      if (chosen[i].data->size() < min_part_size_) {
        return S3Error{400, "EntityTooSmall",
                       "Your proposed upload is smaller than the minimum allowed object size."};
      }
    }
    meta.content_type = it->second.content_type;
    meta.metadata = it->second.metadata;
    uploads_.erase(it);
  }
  std::vector<std::string> md5s;
  md5s.reserve(chosen.size());
  for (const Part& p : chosen) md5s.push_back(p.md5);
  // The object is its parts' buffers read in order: nothing is copied.
  std::vector<BufferPtr> chunks;
  chunks.reserve(chosen.size());
  for (const Part& p : chosen) chunks.push_back(p.data);
  auto obj = std::make_shared<Object>();
  obj->data = std::make_shared<const Body>(chunks);
  obj->etag = MultipartEtag(md5s);
  obj->mtime = std::time(nullptr);
  if (!meta.content_type.empty()) obj->content_type = meta.content_type;
  obj->metadata = std::move(meta.metadata);
  ObjectPtr result = obj;
  if (auto err = Put(bucket, key, result)) return *err;
  return result;
}

std::optional<S3Error> Store::Abort(const std::string& bucket, const std::string& key,
                                    const std::string& upload_id) {
  bucketfs::MutexLock lock(uploads_mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end() || it->second.bucket != bucket || it->second.key != key) {
    return NoSuchUpload();
  }
  uploads_.erase(it);
  return std::nullopt;
}

Expected<std::vector<Upload>> Store::ListUploads(const std::string& bucket,
                                                 const std::string& prefix) const {
  if (!BucketExists(bucket)) return NoSuchBucket();
  bucketfs::MutexLock lock(uploads_mu_);
  std::vector<Upload> out;
  for (const auto& [id, u] : uploads_) {
    if (u.bucket == bucket && u.key.compare(0, prefix.size(), prefix) == 0) {
      Upload copy = u;
      copy.parts.clear();
      out.push_back(std::move(copy));
    }
  }
  std::sort(out.begin(), out.end(), [](const Upload& a, const Upload& b) {
    return std::tie(a.key, a.initiated, a.id) < std::tie(b.key, b.initiated, b.id);
  });
  return out;
}

Expected<Upload> Store::GetUpload(const std::string& bucket, const std::string& key,
                                  const std::string& upload_id) const {
  bucketfs::MutexLock lock(uploads_mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end() || it->second.bucket != bucket || it->second.key != key) {
    return NoSuchUpload();
  }
  return it->second;
}

}  // namespace s3sim
