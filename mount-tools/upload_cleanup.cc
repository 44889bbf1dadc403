// CleanupUploads: list and abort leftover multipart uploads (see header).
#include "mount-tools/upload_cleanup.h"

#include <spdlog/spdlog.h>

namespace bucketfs::tools {

Result<UploadCleanupReport> CleanupUploads(s3::ObjectClient& client,
                                           const UploadCleanupOptions& options) {
  UploadCleanupReport report;
  s3::ListMultipartUploadsParams p;
  p.bucket = options.bucket;
  p.prefix = options.prefix;
  for (;;) {
    auto page = client.ListMultipartUploads(p);
    if (!page.ok()) return page.error();
    for (const auto& u : page->uploads) {
      if (u.key.compare(0, options.prefix.size(), options.prefix) != 0) continue;
      // An unknown initiation time (epoch) counts as old.
      if (options.older_than.count() > 0 && u.initiated.time_since_epoch().count() != 0 &&
          u.initiated > options.now - options.older_than) {
        ++report.skipped_young;
        continue;
      }
      report.matched.push_back(u);
      if (options.dry_run) continue;
      Status s = client.AbortMultipartUpload({options.bucket, u.key, u.upload_id});
      if (s.ok()) {
        ++report.aborted;
      } else {
        ++report.failed;
        spdlog::warn("AbortMultipartUpload s3://{}/{} ({}): {}", options.bucket, u.key, u.upload_id,
                     s.error().ToString());
      }
    }
    if (!page->is_truncated) break;
    if (page->next_key_marker.empty() && page->next_upload_id_marker.empty()) break;
    p.key_marker = page->next_key_marker;
    p.upload_id_marker = page->next_upload_id_marker;
  }
  return report;
}

void WarnAboutLeftoverUploads(s3::ObjectClient& client, const std::string& bucket,
                              const std::string& prefix) {
  s3::ListMultipartUploadsParams p;
  p.bucket = bucket;
  p.prefix = prefix;
  auto page = client.ListMultipartUploads(p);  // one page is enough to warn
  if (!page.ok()) {
    spdlog::debug("ListMultipartUploads s3://{}/{}: {}", bucket, prefix, page.error().ToString());
    return;
  }
  if (page->uploads.empty()) return;
  spdlog::warn(
      "{}{} unfinished multipart upload(s) under s3://{}/{} (left by a crash?); "
      "`bucketfs cleanup s3://{}/{} --older-than 3600` aborts them",
      page->is_truncated ? "more than " : "", page->uploads.size(), bucket, prefix, bucket, prefix);
}

}  // namespace bucketfs::tools
