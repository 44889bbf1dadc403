// MultipartUpload: see multipart_upload.h.
#include "upload/multipart_upload.h"

#include <spdlog/spdlog.h>

#include <string_view>

namespace bucketfs::upload {
namespace {

constexpr std::string_view kCopyUnsummed = "CopyUnsummed";

}  // namespace

MultipartUpload::MultipartUpload(std::shared_ptr<s3::ObjectClient> client, std::string bucket,
                                 std::string key,
                                 std::shared_ptr<std::atomic<bool>> mount_copies_unsummed)
    : client_(std::move(client)),
      bucket_(std::move(bucket)),
      key_(std::move(key)),
      mount_copies_unsummed_(std::move(mount_copies_unsummed)) {}

Status MultipartUpload::Create(s3::BodyChecksum checksum) {
  checksum_ = checksum;
  s3::CreateMultipartUploadParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.checksum = checksum_;
  auto r = client_->CreateMultipartUpload(p);
  if (!r.ok()) return Log("CreateMultipartUpload", r.error());
  upload_id_ = r->upload_id;
  return Status::Ok();
}

s3::UploadPartParams MultipartUpload::PartParams(int part_number) const {
  s3::UploadPartParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.upload_id = upload_id_;
  p.part_number = part_number;
  p.checksum = checksum_;
  return p;
}

Result<s3::UploadPartResult> MultipartUpload::CopyPart(int part_number, uint64_t offset,
                                                       uint64_t length,
                                                       const std::string& base_etag) {
  s3::UploadPartCopyParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.upload_id = upload_id_;
  p.part_number = part_number;
  p.source_bucket = bucket_;
  p.source_key = key_;
  p.source_offset = offset;
  p.source_length = length;
  p.source_if_match = base_etag;
  auto r = client_->UploadPartCopy(p);
  if (!r.ok()) return Log("UploadPartCopy", r.error());
  if (checksum_ == s3::BodyChecksum::kCrc32c && r->checksum_crc32c.empty()) {
    return MakeError(EIO, std::string(kCopyUnsummed),
                     "UploadPartCopy reported no CRC32C for part " + std::to_string(part_number));
  }
  return r;
}

bool MultipartUpload::IsCopyUnsummed(const Error& e) { return e.code == kCopyUnsummed; }

bool MultipartUpload::IsCopyUnsupported(const Error& e) {
  return e.errno_value == ENOTSUP || e.code == "NotImplemented";
}

void MultipartUpload::NoteCopiesUnsummed() {
  spdlog::info("{}: the store reports no CRC32C for copied parts; uploading with Content-MD5",
               key_);
  copies_unsummed_ = true;
  if (mount_copies_unsummed_) mount_copies_unsummed_->store(true);
}

bool MultipartUpload::CopiesUnsummed() const {
  return copies_unsummed_ || (mount_copies_unsummed_ && mount_copies_unsummed_->load());
}

void MultipartUpload::NoteCopiesUnsupported() {
  spdlog::info("{}: the store has no UploadPartCopy; uploading unchanged parts instead", key_);
  copies_supported_ = false;
}

Result<std::string> MultipartUpload::Complete(std::vector<s3::CompletedPart> parts) {
  s3::CompleteMultipartUploadParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.upload_id = upload_id_;
  p.parts = std::move(parts);
  auto r = client_->CompleteMultipartUpload(p);
  if (!r.ok()) return Log("CompleteMultipartUpload", r.error());
  upload_id_.clear();
  return r->etag;
}

void MultipartUpload::Abort() {
  if (upload_id_.empty()) return;
  s3::AbortMultipartUploadParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.upload_id = upload_id_;
  Status s = client_->AbortMultipartUpload(p);
  if (!s.ok()) Log("AbortMultipartUpload", s.error());
  upload_id_.clear();
}

Result<std::string> MultipartUpload::Put(std::span<const std::byte> body,
                                         s3::BodyChecksum checksum) {
  s3::PutObjectParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.checksum = checksum;
  auto r = client_->PutObject(p, body);
  if (!r.ok()) return Log("PutObject", r.error());
  return r->etag;
}

Status MultipartUpload::ReadBase(uint64_t offset, std::span<std::byte> dest,
                                 const std::string& base_etag) {
  s3::GetObjectParams p;
  p.bucket = bucket_;
  p.key = key_;
  p.offset = offset;
  p.length = dest.size();
  p.if_match = base_etag;
  auto r = client_->GetObject(p, dest);
  if (!r.ok()) return Log("GetObject (base)", r.error());
  return Status::Ok();
}

Error MultipartUpload::Log(const char* op, const Error& e) const {
  spdlog::warn("{} s3://{}/{}: {}", op, bucket_, key_, e.ToString());
  return e;
}

}  // namespace bucketfs::upload
