// `bucketfs s3 rm s3://b/k` and `rm --recursive s3://b/prefix`.
//
// The recursive form lists the prefix (no delimiter) a page at a time and
// deletes each page with one DeleteObjects request (at most 1000 keys, the
// S3 limit), so memory stays bounded. Keys that fail are reported one per
// line and make the exit status non-zero.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "mount-tools/s3_cli.h"
#include "mount-tools/s3_url.h"

namespace bucketfs::tools {
namespace {

struct RmOptions {
  std::string url;
  bool recursive = false;
  bool quiet = false;
};

int RemoveRecursive(s3::ObjectClient& client, const S3Url& url, const RmOptions& o) {
  s3::ListObjectsV2Params lp;
  lp.bucket = url.bucket;
  lp.prefix = url.key;
  lp.max_keys = 1000;
  uint64_t deleted = 0;
  int failures = 0;
  while (true) {
    auto page = client.ListObjectsV2(lp);
    if (!page.ok()) return ReportError("rm", url.ToString(), page.error());
    if (!page->objects.empty()) {
      s3::DeleteObjectsParams dp;
      dp.bucket = url.bucket;
      dp.quiet = true;
      for (const auto& obj : page->objects) dp.keys.push_back(obj.key);
      auto r = client.DeleteObjects(dp);
      if (!r.ok()) return ReportError("rm", url.ToString(), r.error());
      for (const auto& [key, err] : r->failed) {
        ReportError("rm", S3Url{url.bucket, key}.ToString(), err);
        ++failures;
      }
      uint64_t ok = dp.keys.size() - r->failed.size();
      deleted += ok;
      if (!o.quiet) {
        for (const auto& key : dp.keys) {
          bool failed = false;
          for (const auto& f : r->failed) failed = failed || f.first == key;
          if (!failed) std::printf("delete: %s\n", S3Url{url.bucket, key}.ToString().c_str());
        }
      }
    }
    if (!page->is_truncated) break;
    // Continue after the last key seen rather than with a continuation
    // token: the listing changed under the token (its keys are gone now).
    if (page->objects.empty()) {
      lp.continuation_token = page->next_continuation_token;
    } else {
      lp.start_after = page->objects.back().key;
      lp.continuation_token.clear();
    }
  }
  if (!o.quiet)
    std::fprintf(stderr, "deleted %llu objects\n", static_cast<unsigned long long>(deleted));
  return failures == 0 ? 0 : 1;
}

int RunRm(const RmOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("rm", "", url.error());
  if (url->key.empty() && !o.recursive) {
    return ReportError(
        "rm", o.url,
        MakeError(EINVAL, "InvalidArgument", "missing object key (use --recursive for a prefix)"));
  }
  auto client = ctx.Client();
  if (!client.ok()) return ReportError("rm", o.url, client.error());
  if (o.recursive) return RemoveRecursive(**client, *url, o);
  Status s = (**client).DeleteObject({url->bucket, url->key});
  if (!s.ok()) return ReportError("rm", url->ToString(), s.error());
  if (!o.quiet) std::printf("delete: %s\n", url->ToString().c_str());
  return 0;
}

}  // namespace

std::vector<S3Subcommand> AddRmCommands(CLI::App& s3) {
  auto opts = std::make_shared<RmOptions>();
  CLI::App* rm = s3.add_subcommand("rm", "delete an object, or every object under a prefix");
  rm->add_option("url", opts->url, "s3://BUCKET/KEY or s3://BUCKET/PREFIX with --recursive")
      ->required();
  rm->add_flag("-r,--recursive", opts->recursive, "delete every key under the prefix");
  rm->add_flag("-q,--quiet", opts->quiet, "print nothing on success");
  return {{rm, [opts](S3Context& ctx) { return RunRm(*opts, ctx); }}};
}

}  // namespace bucketfs::tools
