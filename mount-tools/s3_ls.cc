// `bucketfs s3 ls [s3://bucket[/prefix]] [--recursive]` and `mb s3://bucket`.
//
// ls pages through ListObjectsV2 with continuation tokens and prints as it
// goes (constant memory on huge buckets). Without --recursive it lists one
// level ("/" delimiter): sub-prefixes as "PRE name/" lines and objects by
// their name below the prefix; with --recursive every key in full.
// Without a bucket it lists the buckets.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <memory>

#include "mount-tools/s3_cli.h"
#include "mount-tools/s3_url.h"

namespace bucketfs::tools {
namespace {

std::string FormatTime(s3::Timestamp t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

struct LsOptions {
  std::string url;
  bool recursive = false;
  int page_size = 1000;
};

int ListBuckets(s3::ObjectClient& client) {
  auto result = client.ListBuckets();
  if (!result.ok()) return ReportError("ls", "", result.error());
  for (const auto& b : result->buckets) {
    std::printf("%s %s\n", FormatTime(b.creation_date).c_str(), b.name.c_str());
  }
  return 0;
}

int RunLs(const LsOptions& o, S3Context& ctx) {
  auto client = ctx.Client();
  if (!client.ok()) return ReportError("ls", o.url, client.error());
  if (o.url.empty()) return ListBuckets(**client);
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("ls", "", url.error());

  s3::ListObjectsV2Params p;
  p.bucket = url->bucket;
  p.prefix = url->key;
  p.delimiter = o.recursive ? "" : "/";
  p.max_keys = o.page_size;
  // What to strip from names in one-level listings: up to the prefix's last '/'.
  size_t strip = o.recursive ? 0 : p.prefix.rfind('/') + 1;  // npos+1 == 0
  while (true) {
    auto page = (**client).ListObjectsV2(p);
    if (!page.ok()) return ReportError("ls", url->ToString(), page.error());
    for (const auto& prefix : page->common_prefixes) {
      std::printf("%30s %s\n", "PRE", prefix.substr(std::min(strip, prefix.size())).c_str());
    }
    for (const auto& obj : page->objects) {
      std::printf("%s %10llu %s\n", FormatTime(obj.last_modified).c_str(),
                  static_cast<unsigned long long>(obj.size),
                  obj.key.substr(std::min(strip, obj.key.size())).c_str());
    }
    if (!page->is_truncated) break;
    if (page->next_continuation_token.empty()) {
      return ReportError(
          "ls", url->ToString(),
          MakeError(EIO, "InvalidResponse", "truncated listing without a continuation token"));
    }
    p.continuation_token = page->next_continuation_token;
    p.start_after.clear();
  }
  return 0;
}

int RunMb(const std::string& target, S3Context& ctx) {
  auto url = ParseS3Url(target);
  if (!url.ok()) return ReportError("mb", "", url.error());
  if (!url->key.empty()) {
    return ReportError("mb", target, MakeError(EINVAL, "InvalidArgument", "expected s3://BUCKET"));
  }
  auto client = ctx.Client();
  if (!client.ok()) return ReportError("mb", target, client.error());
  s3::CreateBucketParams p;
  p.bucket = url->bucket;
  Status s = (**client).CreateBucket(p);
  if (!s.ok()) return ReportError("mb", target, s.error());
  std::printf("make_bucket: %s\n", url->bucket.c_str());
  return 0;
}

}  // namespace

std::vector<S3Subcommand> AddLsCommands(CLI::App& s3) {
  auto ls_opts = std::make_shared<LsOptions>();
  CLI::App* ls = s3.add_subcommand("ls", "list buckets, or objects under s3://BUCKET[/PREFIX]");
  ls->add_option("url", ls_opts->url, "s3://BUCKET[/PREFIX]; omit to list buckets");
  ls->add_flag("-r,--recursive", ls_opts->recursive, "every key under the prefix, no delimiter");
  ls->add_option("--page-size", ls_opts->page_size, "keys per ListObjectsV2 request")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();

  auto mb_url = std::make_shared<std::string>();
  CLI::App* mb = s3.add_subcommand("mb", "create a bucket");
  mb->add_option("url", *mb_url, "s3://BUCKET")->required();

  return {{ls, [ls_opts](S3Context& ctx) { return RunLs(*ls_opts, ctx); }},
          {mb, [mb_url](S3Context& ctx) { return RunMb(*mb_url, ctx); }}};
}

}  // namespace bucketfs::tools
