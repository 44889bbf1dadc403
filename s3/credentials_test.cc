// The credentials chain with injected environments and temporary files,
// plus the INI reader it stands on.
#include "s3/credentials.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "s3/shared_config.h"

namespace bucketfs::s3 {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "bucketfs-cred-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Result<Credentials> Resolve(const CredentialsOptions& o, const EnvMap& env) {
  return MakeDefaultCredentialsChain(o, env)->GetCredentials();
}

TEST(CredIni, ToleratesCommentsWhitespaceAndSubsections) {
  const IniFile ini = ParseIni(
      "# leading comment\n"
      "stray = before any section\n"
      "; another\n"
      "\n"
      "[default]\n"
      "  aws_access_key_id  =  AKID   \r\n"
      "AWS_Secret_Access_Key=se/cr+et ; trailing comment\n"
      "unknown_key = whatever\n"
      "no equals sign here\n"
      "[  profile    dev  ]\n"
      "region = eu-west-1 # why\n"
      "endpoint_url = http://h:9000/#frag\n"
      "s3 =\n"
      "    addressing_style = path\n"
      "  max_concurrent_requests = 20\n"
      "after = x\n"
      "[broken\n"
      "lost = 1\n");
  const IniSection* d = ini.Find("default");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->at("aws_access_key_id"), "AKID");
  EXPECT_EQ(d->at("aws_secret_access_key"), "se/cr+et");
  EXPECT_EQ(d->at("unknown_key"), "whatever");
  EXPECT_EQ(d->count("stray"), 0u);
  const IniSection* dev = ini.Find("profile dev");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->at("region"), "eu-west-1");
  EXPECT_EQ(dev->at("endpoint_url"), "http://h:9000/#frag");
  EXPECT_EQ(dev->at("s3.addressing_style"), "path");
  EXPECT_EQ(dev->at("s3.max_concurrent_requests"), "20");
  EXPECT_EQ(dev->at("after"), "x");
  for (const auto& [name, section] : ini.sections) EXPECT_EQ(section.count("lost"), 0u) << name;
}

TEST(CredChain, AnonymousWhenNoSignRequest) {
  CredentialsOptions o;
  o.no_sign_request = true;
  auto r = Resolve(o, {{"AWS_ACCESS_KEY_ID", "A"}, {"AWS_SECRET_ACCESS_KEY", "S"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->anonymous);
  EXPECT_TRUE(r->access_key_id.empty());
}

TEST(CredChain, EnvironmentFirst) {
  TempDir dir;
  dir.Write(".aws/credentials", "[default]\naws_access_key_id=FILE\naws_secret_access_key=FS\n");
  auto r = Resolve({}, {{"HOME", dir.path()},
                        {"AWS_ACCESS_KEY_ID", "ENVID"},
                        {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"},
                        {"AWS_SESSION_TOKEN", "TOK"}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->access_key_id, "ENVID");
  EXPECT_EQ(r->secret_access_key, "ENVSECRET");
  EXPECT_EQ(r->session_token, "TOK");
  EXPECT_FALSE(r->anonymous);
}

TEST(CredChain, HalfSetEnvironmentIsAClearError) {
  auto r = Resolve({}, {{"AWS_ACCESS_KEY_ID", "ENVID"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "IncompleteCredentials");
  EXPECT_NE(r.error().message.find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
  EXPECT_EQ(r.error().message.find("ENVID"), std::string::npos);  // never the value
}

TEST(CredChain, DefaultProfileFromHomeCredentialsFile) {
  TempDir dir;
  dir.Write(".aws/credentials",
            "[other]\naws_access_key_id=O\naws_secret_access_key=OS\n"
            "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
            "aws_session_token = DT\n");
  auto r = Resolve({}, {{"HOME", dir.path()}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->access_key_id, "D");
  EXPECT_EQ(r->secret_access_key, "DS");
  EXPECT_EQ(r->session_token, "DT");
}

TEST(CredChain, ProfileFromAwsProfileAndConfigFileSections) {
  TempDir dir;
  const std::string creds =
      dir.Write("c", "[default]\naws_access_key_id=D\naws_secret_access_key=DS\n");
  const std::string config = dir.Write(
      "cfg",
      "[default]\nregion=us-east-1\n[profile dev]\naws_access_key_id=V\n"
      "aws_secret_access_key=VS\n[dev]\naws_access_key_id=WRONG\naws_secret_access_key=W\n");
  auto r = Resolve({}, {{"AWS_SHARED_CREDENTIALS_FILE", creds},
                        {"AWS_CONFIG_FILE", config},
                        {"AWS_PROFILE", "dev"}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->access_key_id, "V");  // "[dev]" in the config file is not a profile
}

TEST(CredChain, CredentialsFileBeatsConfigFileAndExplicitProfileBeatsEnv) {
  TempDir dir;
  dir.Write(".aws/credentials", "[work]\naws_access_key_id=C\naws_secret_access_key=CS\n");
  dir.Write(".aws/config", "[profile work]\naws_access_key_id=K\naws_secret_access_key=KS\n");
  CredentialsOptions o;
  o.profile = "work";
  auto r = Resolve(o, {{"HOME", dir.path()},
                       {"AWS_PROFILE", "ignored"},
                       {"AWS_ACCESS_KEY_ID", "ENV"},
                       {"AWS_SECRET_ACCESS_KEY", "ENVS"}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->access_key_id, "C");
}

TEST(CredChain, DefaultProfileInConfigFile) {
  TempDir dir;
  dir.Write(".aws/config", "[default]\naws_access_key_id=K\naws_secret_access_key=KS\n");
  auto r = Resolve({}, {{"HOME", dir.path()}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->access_key_id, "K");
}

TEST(CredChain, NamedProfileMissingIsAClearError) {
  TempDir dir;
  dir.Write(".aws/credentials", "[default]\naws_access_key_id=D\naws_secret_access_key=DS\n");
  CredentialsOptions o;
  o.profile = "nope";
  auto r = Resolve(o, {{"HOME", dir.path()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "ProfileNotFound");
  EXPECT_NE(r.error().message.find("'nope'"), std::string::npos) << r.error().message;

  auto viaenv = Resolve({}, {{"HOME", dir.path()}, {"AWS_PROFILE", "nope"}});
  ASSERT_FALSE(viaenv.ok());
  EXPECT_EQ(viaenv.error().code, "ProfileNotFound");
}

TEST(CredChain, NothingFoundListsSourcesNotValues) {
  TempDir dir;  // empty HOME
  auto r = Resolve({}, {{"HOME", dir.path()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "NoCredentials");
  EXPECT_EQ(r.error().errno_value, EACCES);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("environment"), std::string::npos) << m;
  EXPECT_NE(m.find(dir.path() + "/.aws/credentials (missing)"), std::string::npos) << m;
  EXPECT_NE(m.find(dir.path() + "/.aws/config (missing)"), std::string::npos) << m;
  EXPECT_NE(m.find("--no-sign-request"), std::string::npos) << m;

  // A profile without keys (and nothing better) also ends in NoCredentials.
  dir.Write(".aws/config", "[default]\nregion=eu-west-1\n");
  auto r2 = Resolve({}, {{"HOME", dir.path()}});
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, "NoCredentials");
}

TEST(CredChain, UnsupportedSourceIsNamed) {
  TempDir dir;
  dir.Write(".aws/config", "[profile r]\nrole_arn=arn:aws:iam::1:role/x\nsource_profile=default\n");
  CredentialsOptions o;
  o.profile = "r";
  auto r = Resolve(o, {{"HOME", dir.path()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "UnsupportedCredentialSource");
  EXPECT_NE(r.error().message.find("role_arn"), std::string::npos);
  EXPECT_EQ(r.error().message.find("arn:aws"), std::string::npos);
}

TEST(CredChain, ResultIsCachedAfterFirstSuccess) {
  TempDir dir;
  dir.Write(".aws/credentials", "[default]\naws_access_key_id=A1\naws_secret_access_key=S\n");
  auto chain = MakeDefaultCredentialsChain({}, {{"HOME", dir.path()}});
  ASSERT_EQ(chain->GetCredentials()->access_key_id, "A1");
  dir.Write(".aws/credentials", "[default]\naws_access_key_id=A2\naws_secret_access_key=S\n");
  EXPECT_EQ(chain->GetCredentials()->access_key_id, "A1");
}

TEST(CredChain, StaticProvider) {
  auto p = MakeStaticCredentialsProvider({"id", "secret", "tok", false});
  auto r = p->GetCredentials();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->access_key_id, "id");
  EXPECT_EQ(r->session_token, "tok");
}

TEST(CredEnvironment, ReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("BUCKETFS_CRED_TEST_VAR", "a=b", 1), 0);
  const EnvMap env = CurrentEnvironment();
  unsetenv("BUCKETFS_CRED_TEST_VAR");
  ASSERT_EQ(env.count("BUCKETFS_CRED_TEST_VAR"), 1u);
  EXPECT_EQ(env.at("BUCKETFS_CRED_TEST_VAR"), "a=b");
}

}  // namespace
}  // namespace bucketfs::s3
