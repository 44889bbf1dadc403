// ClientConfig: every setting of the S3 client, resolved once into an
// immutable struct (flags override environment, environment overrides the
// shared config file, which overrides defaults) and passed to constructors.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "s3/credentials.h"
#include "s3/result.h"

namespace bucketfs::s3 {

struct ClientConfig {
  // "" means AWS: https://s3.<region>.amazonaws.com (virtual-hosted style).
  std::string endpoint_url;
  std::string region = "us-east-1";
  bool force_path_style = false;
  CredentialsOptions credentials;
  std::string ca_bundle;  // "" = system CAs
  bool verify_tls = true;
  // Transport.
  int max_connections = 64;   // total open connections across threads
  int transport_threads = 0;  // 0 = one per core
  std::chrono::seconds low_speed_time{30};
  long low_speed_bytes_per_sec = 1024;
  // Retries: attempts include the first; backoff is exponential with full jitter.
  int max_attempts = 6;
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_max{20000};
  // Sign payloads (x-amz-content-sha256 = real hash) for small request
  // bodies; large streaming bodies (UploadPart, PutObject past
  // sign_payload_max_bytes) use UNSIGNED-PAYLOAD plus Content-MD5.
  uint64_t sign_payload_max_bytes = 64 * 1024;
  // Pace requests per bucket once the store answers 503 SlowDown / 429
  // (s3/request_pacer.h); until then nothing is paced.
  bool adaptive_rate = true;
};

// What the user set explicitly (flags); unset fields fall back to the
// environment (AWS_ENDPOINT_URL, AWS_REGION, AWS_DEFAULT_REGION, AWS_PROFILE,
// AWS_CA_BUNDLE, AWS_CONFIG_FILE) and then to the profile's section of the
// shared config file (region, endpoint_url).
struct ClientConfigOverrides {
  std::optional<std::string> endpoint_url;
  std::optional<std::string> region;
  std::optional<bool> force_path_style;
  std::optional<std::string> profile;
  std::optional<bool> no_sign_request;
  std::optional<std::string> ca_bundle;
  std::optional<bool> verify_tls;
  std::optional<int> max_attempts;                    // --retry-attempts
  std::optional<std::chrono::seconds> stall_timeout;  // --stall-timeout: low_speed_time
  std::optional<bool> adaptive_rate;                  // --no-adaptive-rate
};

Result<ClientConfig> ResolveClientConfig(const ClientConfigOverrides& overrides, const EnvMap& env);

// Where requests go: scheme/host/port and addressing style, from ClientConfig.
struct Endpoint {
  std::string scheme;     // "http" or "https"
  std::string host;       // without port
  int port = 0;           // 0 = scheme default
  std::string base_path;  // path prefix of the endpoint URL, usually ""
  // Set by force_path_style, and implied by an IP address or a single-label
  // host (localhost, a container name), which cannot take a bucket prefix.
  bool path_style = false;

  static Result<Endpoint> FromConfig(const ClientConfig& config);
  // Host header value for a bucket ("bucket.s3.amazonaws.com" or "host:port").
  std::string HostFor(const std::string& bucket) const;
  // Encoded path for bucket/key ("/bucket/a%20b" or "/a%20b").
  std::string PathFor(const std::string& bucket, const std::string& key) const;
  // scheme://host[:port]
  std::string Origin(const std::string& bucket) const;

  // Whether requests for `bucket` go path-style: always when path_style; also
  // for "" (ListBuckets), bucket names that are not DNS labels, and dotted
  // bucket names over https (the endpoint's wildcard certificate covers one
  // label only).
  bool UsesPathStyleFor(const std::string& bucket) const;
  // Origin + PathFor + "?" + the query encoded exactly as SigV4 canonicalizes
  // it (so the signed and the sent query string agree).
  std::string UrlFor(const std::string& bucket, const std::string& key,
                     const std::vector<std::pair<std::string, std::string>>& query = {}) const;
};

}  // namespace bucketfs::s3
