// `bucketfs s3 ...`: the direct S3 client. Parses the common flags with
// CLI11, resolves the client config from flags + environment + shared files,
// and runs the chosen subcommand. See s3_cli.h.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "mount-tools/commands.h"
#include "mount-tools/s3_cli.h"
#include "s3/credentials.h"

namespace bucketfs::tools {

Result<s3::ObjectClient*> S3Context::Client(int connection_multiplier) {
  if (client_) return client_.get();
  s3::EnvMap env = s3::CurrentEnvironment();
  auto config = s3::ResolveClientConfig(options_.overrides, env);
  if (!config.ok()) return config.error();
  // Enough pooled connections for every request we keep in flight.
  int want = std::max(1, options_.connections) * std::max(1, connection_multiplier);
  config->max_connections = std::max(want, 1);
  if (!config->verify_tls) {
    std::fprintf(stderr,
                 "bucketfs s3: warning: TLS certificate verification is off "
                 "(--no-verify-ssl)\n");
  }
  auto client = s3::MakeS3Client(*config, env);
  if (!client.ok()) return client.error();
  client_ = std::move(client).value();
  return client_.get();
}

int ReportError(std::string_view command, std::string_view target, const Error& error) {
  std::string line = "bucketfs s3 " + std::string(command) + ": ";
  if (!target.empty()) line += std::string(target) + ": ";
  line += error.ToString();
  std::fprintf(stderr, "%s\n", line.c_str());
  return 1;
}

namespace {

void AddCommonFlags(CLI::App& app, S3CommonOptions& o) {
  auto& ov = o.overrides;
  app.add_option_function<std::string>(
         "--endpoint-url", [&ov](const std::string& v) { ov.endpoint_url = v; },
         "S3 endpoint, e.g. http://127.0.0.1:9000 (env AWS_ENDPOINT_URL)")
      ->type_name("URL");
  app.add_option_function<std::string>(
         "--region", [&ov](const std::string& v) { ov.region = v; },
         "region for signing (env AWS_REGION)")
      ->type_name("NAME");
  app.add_flag_function(
      "--force-path-style", [&ov](int64_t) { ov.force_path_style = true; },
      "address buckets as http://host/bucket/key instead of bucket.host");
  app.add_option_function<std::string>(
         "--profile", [&ov](const std::string& v) { ov.profile = v; },
         "profile in ~/.aws/credentials and ~/.aws/config (env AWS_PROFILE)")
      ->type_name("NAME");
  app.add_flag_function(
      "--no-sign-request", [&ov](int64_t) { ov.no_sign_request = true; },
      "send anonymous (unsigned) requests");
  app.add_option_function<std::string>(
         "--ca-bundle", [&ov](const std::string& v) { ov.ca_bundle = v; },
         "PEM file of CA certificates (env AWS_CA_BUNDLE)")
      ->type_name("FILE");
  app.add_flag_function(
      "--no-verify-ssl", [&ov](int64_t) { ov.verify_tls = false; },
      "do not verify TLS certificates (insecure)");
  app.add_option("--connections", o.connections, "requests in flight")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--log-level", o.log_level, "trace|debug|info|warn|error|off")
      ->capture_default_str();
  app.add_flag("--no-progress", o.no_progress, "never draw a progress bar");
}

}  // namespace

int RunS3Command(int argc, char** argv) {
  CLI::App app("bucketfs s3: direct S3 client (ls, get, put, rm, mb, bench)", "bucketfs s3");
  app.require_subcommand(1);
  // Common flags may also follow the subcommand name: subcommands created
  // below inherit fallthrough and hand unknown flags up to this app.
  app.fallthrough();
  S3CommonOptions options;
  AddCommonFlags(app, options);

  std::vector<S3Subcommand> subs;
  for (auto add : {AddLsCommands, AddTransferCommands, AddRmCommands, AddBenchCommands}) {
    auto more = add(app);
    subs.insert(subs.end(), more.begin(), more.end());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  spdlog::set_level(spdlog::level::from_str(options.log_level));
  S3Context context(options);
  for (const auto& sub : subs) {
    if (sub.app->parsed()) return sub.run(context);
  }
  std::fprintf(stderr, "%s", app.help().c_str());
  return 2;
}

}  // namespace bucketfs::tools
