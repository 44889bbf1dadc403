// Upload cleanup: finds the multipart uploads a crashed bucketfs left behind
// (a daemon killed mid-write never completes or aborts its upload; S3 keeps
// the parts, and bills them, until someone aborts it) and aborts them.
//
// bucketfs does not tag its uploads, so "ours" means: under the mounted
// bucket/prefix and older than a minimum age (so the uploads of a daemon
// still writing, or of another tool, are left alone when an age is given).
// Used by `bucketfs cleanup` and, listing only, at mount time.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::tools {

struct UploadCleanupOptions {
  std::string bucket;
  std::string prefix;                  // only uploads whose key starts with it
  std::chrono::seconds older_than{0};  // only uploads initiated before now - older_than
  bool dry_run = false;                // list, do not abort
  s3::Timestamp now = std::chrono::system_clock::now();
};

struct UploadCleanupReport {
  std::vector<s3::MultipartUploadInfo> matched;  // selected (aborted unless dry run)
  size_t aborted = 0;
  size_t failed = 0;  // aborts that failed (logged)
  size_t skipped_young = 0;
};

// Lists every page of ListMultipartUploads under the prefix and aborts the
// uploads old enough. Fails only if listing fails.
Result<UploadCleanupReport> CleanupUploads(s3::ObjectClient& client,
                                           const UploadCleanupOptions& options);

// At mount time: lists (never aborts: another daemon may be writing) the
// uploads under bucket/prefix and logs a warning naming `bucketfs cleanup`
// when there are any. Listing errors are logged at debug level only.
void WarnAboutLeftoverUploads(s3::ObjectClient& client, const std::string& bucket,
                              const std::string& prefix);

}  // namespace bucketfs::tools
