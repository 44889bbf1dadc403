// MultipartUpload: the S3 side of one staged upload (StagedUpload): the
// multipart upload's lifecycle (create, the part parameters, server-side
// copies of unchanged parts, complete, abort), the single PutObject of a
// small file, the ranged GET of a base object's bytes, and the checksum
// fallback.
//
// The checksum fallback: parts carry the configured checksum (CRC32C by
// default, else Content-MD5), and Complete repeats, for a copied part, the
// CRC32C the store reports in CopyPartResult. A store that reports none makes
// CopyPart fail with CopyUnsummed: the caller starts a new upload with MD5
// (NoteCopiesUnsummed), and the mount remembers it, so later uploads over a
// base that will copy a part choose MD5 when they are created.
//
// Not thread-safe: the owner serializes every call (it holds its mutex).
// Part uploads themselves go straight to the client from the owner's tasks,
// with the parameters PartParams gave.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::upload {

class MultipartUpload {
 public:
  // `mount_copies_unsummed`: shared by the mount's uploads (may be null).
  MultipartUpload(std::shared_ptr<s3::ObjectClient> client, std::string bucket, std::string key,
                  std::shared_ptr<std::atomic<bool>> mount_copies_unsummed);

  bool started() const { return !upload_id_.empty(); }
  // The checksum of the upload's parts.
  s3::BodyChecksum checksum() const { return checksum_; }
  // Creates the upload with `checksum`. REQUIRES: !started().
  Status Create(s3::BodyChecksum checksum);
  // What UploadPart needs for part `part_number` of this upload.
  s3::UploadPartParams PartParams(int part_number) const;

  // Copies [offset, offset + length) of the object as it is (If-Match
  // `base_etag`) into part `part_number`.
  Result<s3::UploadPartResult> CopyPart(int part_number, uint64_t offset, uint64_t length,
                                        const std::string& base_etag);
  // CopyPart's error for a copy into a CRC32C upload that came without its sum.
  static bool IsCopyUnsummed(const Error& e);
  // CopyPart's error from stores without UploadPartCopy (s3rver, some
  // gateways answer 501 NotImplemented).
  static bool IsCopyUnsupported(const Error& e);
  // The store copies without reporting CRC32C: for this upload and the mount's.
  void NoteCopiesUnsummed();
  // This upload or another of the mount saw copies without their CRC32C.
  bool CopiesUnsummed() const;
  // The store has no UploadPartCopy: unchanged parts are uploaded instead.
  void NoteCopiesUnsupported();
  bool copies_supported() const { return copies_supported_; }

  // Completes the upload with `parts`; the object's ETag.
  Result<std::string> Complete(std::vector<s3::CompletedPart> parts);
  // Drops the upload, if one was created (a failure is logged).
  void Abort();

  // The whole object in one PutObject with `checksum`; its ETag.
  Result<std::string> Put(std::span<const std::byte> body, s3::BodyChecksum checksum);
  // Fills `dest` with the object's bytes from `offset`, If-Match `base_etag`.
  Status ReadBase(uint64_t offset, std::span<std::byte> dest, const std::string& base_etag);

  // Logs `e` from `op` with the object's name; returns it.
  Error Log(const char* op, const Error& e) const;

 private:
  const std::shared_ptr<s3::ObjectClient> client_;
  const std::string bucket_;
  const std::string key_;
  const std::shared_ptr<std::atomic<bool>> mount_copies_unsummed_;
  std::string upload_id_;
  s3::BodyChecksum checksum_ = s3::BodyChecksum::kMd5;
  bool copies_unsummed_ = false;  // a copy came without its CRC32C
  bool copies_supported_ = true;  // the store has not answered 501 to UploadPartCopy
};

}  // namespace bucketfs::upload
