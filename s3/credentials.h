// Credentials and the provider chain.
//
// The chain asks each provider in order and takes the first that has
// credentials: explicit (--no-sign-request gives anonymous), environment
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN), the shared
// files (~/.aws/credentials and ~/.aws/config, AWS_SHARED_CREDENTIALS_FILE,
// AWS_CONFIG_FILE, profile from --profile or AWS_PROFILE). IMDSv2 and web
// identity slot in as further providers later. Secrets are never logged:
// Credentials has no ToString and its fields must not be formatted.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "s3/result.h"

namespace bucketfs::s3 {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty when none
  bool anonymous = false;     // requests go unsigned
};

class CredentialsProvider {
 public:
  virtual ~CredentialsProvider() = default;
  // Thread-safe. Errors say which sources were tried (never their contents).
  virtual Result<Credentials> GetCredentials() = 0;
};

// The process environment as a map, so tests inject their own.
using EnvMap = std::map<std::string, std::string>;
EnvMap CurrentEnvironment();

struct CredentialsOptions {
  std::string profile;           // "" = AWS_PROFILE or "default"
  bool no_sign_request = false;  // anonymous
};

// The default chain: anonymous if asked, else env, else shared files.
std::unique_ptr<CredentialsProvider> MakeDefaultCredentialsChain(const CredentialsOptions& options,
                                                                 const EnvMap& env);

// A provider that always returns the given credentials (tests, CLI flags).
std::unique_ptr<CredentialsProvider> MakeStaticCredentialsProvider(Credentials credentials);

}  // namespace bucketfs::s3
