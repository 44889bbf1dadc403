// `bucketfs cleanup s3://BUCKET[/PREFIX] [--older-than SECONDS] [--dry-run]`:
// lists the multipart uploads left under the prefix (by a daemon that died
// mid-write) and aborts them. Prints one line per upload and a summary.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "mount-tools/commands.h"
#include "mount-tools/s3_url.h"
#include "mount-tools/upload_cleanup.h"
#include "s3/client_config.h"
#include "s3/credentials.h"

namespace bucketfs::tools {

int RunCleanupCommand(int argc, char** argv) {
  CLI::App app("bucketfs cleanup: abort multipart uploads bucketfs left behind",
               "bucketfs cleanup");
  std::string url;
  int64_t older_than = 0;
  bool dry_run = false;
  std::string log_level = "warn";
  s3::ClientConfigOverrides ov;
  app.add_option("url", url, "s3://BUCKET[/PREFIX]")->required();
  app.add_option("--older-than", older_than, "only uploads started at least SECONDS ago (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--dry-run", dry_run, "list, do not abort");
  app.add_option_function<std::string>(
      "--endpoint-url", [&ov](const std::string& v) { ov.endpoint_url = v; },
      "S3 endpoint (env AWS_ENDPOINT_URL)");
  app.add_option_function<std::string>(
      "--region", [&ov](const std::string& v) { ov.region = v; }, "region for signing");
  app.add_flag_function(
      "--force-path-style", [&ov](int64_t) { ov.force_path_style = true; },
      "address buckets as http://host/bucket/key");
  app.add_option_function<std::string>(
      "--profile", [&ov](const std::string& v) { ov.profile = v; }, "shared-config profile");
  app.add_option_function<std::string>(
      "--ca-bundle", [&ov](const std::string& v) { ov.ca_bundle = v; }, "PEM CA bundle");
  app.add_flag_function(
      "--no-verify-ssl", [&ov](int64_t) { ov.verify_tls = false; },
      "do not verify TLS certificates (insecure)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  spdlog::set_level(spdlog::level::from_str(log_level));

  auto target = ParseS3Url(url);
  if (!target.ok()) {
    std::fprintf(stderr, "bucketfs cleanup: %s\n", target.error().message.c_str());
    return 2;
  }
  s3::EnvMap env = s3::CurrentEnvironment();
  auto config = s3::ResolveClientConfig(ov, env);
  if (!config.ok()) {
    std::fprintf(stderr, "bucketfs cleanup: %s\n", config.error().message.c_str());
    return 1;
  }
  auto client = s3::MakeS3Client(*config, env);
  if (!client.ok()) {
    std::fprintf(stderr, "bucketfs cleanup: %s\n", client.error().ToString().c_str());
    return 1;
  }
  UploadCleanupOptions options;
  options.bucket = target->bucket;
  options.prefix = target->key;
  options.older_than = std::chrono::seconds(older_than);
  options.dry_run = dry_run;
  auto report = CleanupUploads(**client, options);
  if (!report.ok()) {
    std::fprintf(stderr, "bucketfs cleanup: %s: %s\n", url.c_str(),
                 report.error().ToString().c_str());
    return 1;
  }
  for (const auto& u : report->matched) {
    std::printf("%s s3://%s/%s %s\n", dry_run ? "would abort" : "aborted", target->bucket.c_str(),
                u.key.c_str(), u.upload_id.c_str());
  }
  std::printf("%zu upload(s) %s, %zu failed, %zu younger than --older-than kept\n",
              report->matched.size(), dry_run ? "found" : "aborted", report->failed,
              report->skipped_young);
  return report->failed == 0 ? 0 : 1;
}

}  // namespace bucketfs::tools
