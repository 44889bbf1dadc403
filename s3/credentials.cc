// The credentials provider chain. See credentials.h.
//
// Each source is a CredentialsProvider returning either credentials, an
// error with code kNotHere ("this source has nothing; ask the next"), or a
// real error that stops the chain (a named profile that does not exist,
// half-set environment keys): silently falling through to another identity
// would be worse than failing. The chain remembers the first success, since
// every source here yields long-lived keys; an expiring source (IMDSv2, web
// identity) would cache and refresh inside its own provider.
#include "s3/credentials.h"

#include <optional>
#include <utility>

#include "base/mutex.h"
#include "s3/shared_config.h"

extern char** environ;  // NOLINT: POSIX

namespace bucketfs::s3 {
namespace {

constexpr const char* kNotHere = "NotHere";

Error NotHere(std::string what_was_tried) {
  return MakeError(EACCES, kNotHere, std::move(what_was_tried));
}

class StaticProvider final : public CredentialsProvider {
 public:
  explicit StaticProvider(Credentials c) : credentials_(std::move(c)) {}
  Result<Credentials> GetCredentials() override { return credentials_; }

 private:
  const Credentials credentials_;
};

class EnvironmentProvider final : public CredentialsProvider {
 public:
  explicit EnvironmentProvider(EnvMap env) : env_(std::move(env)) {}
  Result<Credentials> GetCredentials() override {
    const auto id = EnvValue(env_, "AWS_ACCESS_KEY_ID");
    const auto secret = EnvValue(env_, "AWS_SECRET_ACCESS_KEY");
    if (!id && !secret) return NotHere("environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
    if (!id || !secret) {
      return MakeError(
          EACCES, "IncompleteCredentials",
          std::string(id ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
                         : "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"));
    }
    Credentials c;
    c.access_key_id = *id;
    c.secret_access_key = *secret;
    if (auto token = EnvValue(env_, "AWS_SESSION_TOKEN")) {
      c.session_token = *token;
    } else if (auto legacy = EnvValue(env_, "AWS_SECURITY_TOKEN")) {
      c.session_token = *legacy;
    }
    return c;
  }

 private:
  const EnvMap env_;
};

// Keys of `profile` from the credentials file ("[name]") or, failing that,
// the config file ("[profile name]", "[default]").
class SharedFilesProvider final : public CredentialsProvider {
 public:
  SharedFilesProvider(const CredentialsOptions& options, const EnvMap& env)
      : profile_(EffectiveProfile(options.profile, env, &explicitly_named_)),
        credentials_path_(SharedCredentialsFilePath(env)),
        config_path_(SharedConfigFilePath(env)) {}

  Result<Credentials> GetCredentials() override {
    bool creds_missing = true;
    bool config_missing = true;
    IniFile creds_file;
    IniFile config_file;
    if (!credentials_path_.empty()) {
      auto r = ReadIniFile(credentials_path_, &creds_missing);
      if (!r.ok()) return r.error();
      creds_file = std::move(r.value());
    }
    if (!config_path_.empty()) {
      auto r = ReadIniFile(config_path_, &config_missing);
      if (!r.ok()) return r.error();
      config_file = std::move(r.value());
    }
    const IniSection* in_creds = creds_file.Find(profile_);
    const IniSection* in_config = ConfigFileProfile(config_file, profile_);

    for (const IniSection* section : {in_creds, in_config}) {
      const auto id = IniValue(section, "aws_access_key_id");
      const auto secret = IniValue(section, "aws_secret_access_key");
      if (id && secret) {
        Credentials c;
        c.access_key_id = *id;
        c.secret_access_key = *secret;
        if (auto token = IniValue(section, "aws_session_token")) c.session_token = *token;
        return c;
      }
      if (id || secret) {
        return MakeError(EACCES, "IncompleteCredentials",
                         "profile '" + profile_ + "' has only one of aws_access_key_id and " +
                             "aws_secret_access_key" + Where(section == in_creds));
      }
    }
    const std::string tried = "shared credentials file " +
                              Describe(credentials_path_, creds_missing) + " and config file " +
                              Describe(config_path_, config_missing) + " (profile '" + profile_ +
                              "')";
    if (in_creds == nullptr && in_config == nullptr) {
      if (explicitly_named_) {
        return MakeError(EINVAL, "ProfileNotFound",
                         "profile '" + profile_ + "' not found in " +
                             Describe(credentials_path_, creds_missing) + " or " +
                             Describe(config_path_, config_missing));
      }
      return NotHere(tried);
    }
    // The profile exists but holds no keys: say what it does use, if known.
    for (const char* unsupported : {"role_arn", "credential_process", "sso_session",
                                    "sso_start_url", "web_identity_token_file"}) {
      if (IniValue(in_creds, unsupported) || IniValue(in_config, unsupported)) {
        return MakeError(EACCES, "UnsupportedCredentialSource",
                         "profile '" + profile_ + "' uses " + unsupported +
                             ", which bucketfs does not support yet; export "
                             "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY instead");
      }
    }
    return NotHere(tried + " (the profile has no aws_access_key_id)");
  }

 private:
  std::string Where(bool in_credentials_file) const {
    return " in " + (in_credentials_file ? credentials_path_ : config_path_);
  }
  static std::string Describe(const std::string& path, bool missing) {
    if (path.empty()) return "(none: HOME is not set)";
    return missing ? path + " (missing)" : path;
  }

  bool explicitly_named_ = false;
  const std::string profile_;
  const std::string credentials_path_;
  const std::string config_path_;
};

class ChainProvider final : public CredentialsProvider {
 public:
  explicit ChainProvider(std::vector<std::unique_ptr<CredentialsProvider>> providers)
      : providers_(std::move(providers)) {}

  Result<Credentials> GetCredentials() override {
    MutexLock lock(mu_);
    if (cached_) return *cached_;
    std::string tried;
    for (const auto& provider : providers_) {
      Result<Credentials> r = provider->GetCredentials();
      if (r.ok()) {
        cached_ = r.value();
        return r;
      }
      if (r.error().code != kNotHere) return r;
      tried += (tried.empty() ? "" : "; ") + r.error().message;
    }
    return MakeError(EACCES, "NoCredentials",
                     "no AWS credentials found; tried: " + tried +
                         ". Set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, configure a profile, or "
                         "use --no-sign-request for a public bucket");
  }

 private:
  const std::vector<std::unique_ptr<CredentialsProvider>> providers_;
  Mutex mu_;
  std::optional<Credentials> cached_ GUARDED_BY(mu_);
};

}  // namespace

EnvMap CurrentEnvironment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::unique_ptr<CredentialsProvider> MakeStaticCredentialsProvider(Credentials credentials) {
  return std::make_unique<StaticProvider>(std::move(credentials));
}

std::unique_ptr<CredentialsProvider> MakeDefaultCredentialsChain(const CredentialsOptions& options,
                                                                 const EnvMap& env) {
  if (options.no_sign_request) {
    Credentials anonymous;
    anonymous.anonymous = true;
    return MakeStaticCredentialsProvider(anonymous);
  }
  std::vector<std::unique_ptr<CredentialsProvider>> providers;
  // An explicit --profile means the user chose that identity: environment
  // keys are then not consulted (as the AWS CLI does).
  if (options.profile.empty()) providers.push_back(std::make_unique<EnvironmentProvider>(env));
  providers.push_back(std::make_unique<SharedFilesProvider>(options, env));
  // Later providers go here, in this order: web identity
  // (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN, STS AssumeRoleWithWebIdentity),
  // then the ECS container endpoint, then IMDSv2. They return kNotHere when
  // their source is absent and refresh expiring credentials themselves.
  return std::make_unique<ChainProvider>(std::move(providers));
}

}  // namespace bucketfs::s3
