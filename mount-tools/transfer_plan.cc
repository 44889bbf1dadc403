#include "mount-tools/transfer_plan.h"

#include <spdlog/spdlog.h>

#include "mount-tools/progress_bar.h"
#include "mount-tools/windowed_runner.h"
#include "s3/s3_limits.h"

namespace bucketfs::tools {

std::vector<Part> SplitIntoParts(uint64_t size, uint64_t part_size) {
  std::vector<Part> parts;
  parts.reserve(size / part_size + 1);
  for (uint64_t off = 0; off < size; off += part_size) {
    parts.push_back({off, std::min(part_size, size - off)});
  }
  return parts;
}

uint64_t FitPartSize(uint64_t size, uint64_t part_size) {
  constexpr uint64_t kMaxParts = s3::kMaxPartNumber;
  constexpr uint64_t kMiB = 1 << 20;
  if ((size + part_size - 1) / part_size <= kMaxParts) return part_size;
  uint64_t need = (size + kMaxParts - 1) / kMaxParts;
  return (need + kMiB - 1) / kMiB * kMiB;
}

Status UploadBuffer(s3::ObjectClient& client, const UploadSpec& spec,
                    const std::function<std::span<const std::byte>(const Part&)>& part_bytes,
                    uint64_t size, ProgressBar* bar, uint64_t* requests) {
  if (size < spec.part_size) {
    s3::PutObjectParams p;
    p.bucket = spec.bucket;
    p.key = spec.key;
    p.content_type = spec.content_type;
    p.checksum = spec.checksum;
    auto r = client.PutObject(p, part_bytes(Part{0, size}));
    if (requests != nullptr) *requests += 1;
    if (!r.ok()) return r.error();
    if (bar != nullptr) bar->Add(size);
    return Status::Ok();
  }

  s3::CreateMultipartUploadParams cp;
  cp.bucket = spec.bucket;
  cp.key = spec.key;
  cp.content_type = spec.content_type;
  cp.checksum = spec.checksum;
  auto created = client.CreateMultipartUpload(cp);
  if (requests != nullptr) *requests += 1;
  if (!created.ok()) return created.error();
  const std::string upload_id = created->upload_id;

  std::vector<Part> parts = SplitIntoParts(size, FitPartSize(size, spec.part_size));
  std::vector<s3::CompletedPart> completed(parts.size());
  WindowedJobs jobs;
  jobs.count = parts.size();
  jobs.window = spec.window;
  jobs.start = [&](size_t i, Completion done) {
    s3::UploadPartParams up;
    up.bucket = spec.bucket;
    up.key = spec.key;
    up.upload_id = upload_id;
    up.part_number = static_cast<int>(i + 1);
    up.checksum = spec.checksum;
    // Each job writes only its own slot of `completed`; RunWindowed's queue
    // orders that write before the read below.
    client.UploadPartAsync(up, part_bytes(parts[i]),
                           [&completed, i, bar, len = parts[i].length,
                            done = std::move(done)](Result<s3::UploadPartResult> r) {
                             if (!r.ok()) {
                               done(r.error());
                               return;
                             }
                             completed[i] = {static_cast<int>(i + 1), r->etag, r->checksum_crc32c};
                             if (bar != nullptr) bar->Add(len);
                             done(Status::Ok());
                           });
  };
  Status s = RunWindowed(jobs);
  if (requests != nullptr) *requests += parts.size();
  if (s.ok()) {
    s3::CompleteMultipartUploadParams fin;
    fin.bucket = spec.bucket;
    fin.key = spec.key;
    fin.upload_id = upload_id;
    fin.parts = std::move(completed);
    auto r = client.CompleteMultipartUpload(fin);
    if (requests != nullptr) *requests += 1;
    if (r.ok()) return Status::Ok();
    s = r.error();
  }
  // Do not leave the parts behind (they are billed and invisible).
  s3::AbortMultipartUploadParams ap{spec.bucket, spec.key, upload_id};
  Status aborted = client.AbortMultipartUpload(ap);
  if (!aborted.ok()) {
    spdlog::warn("could not abort multipart upload of s3://{}/{}: {}", spec.bucket, spec.key,
                 aborted.error().ToString());
  }
  return s;
}

}  // namespace bucketfs::tools
