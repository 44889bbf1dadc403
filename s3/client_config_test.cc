// ClientConfig precedence and Endpoint addressing.
#include "s3/client_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace bucketfs::s3 {
namespace {

class ConfigDir {
 public:
  ConfigDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "bucketfs-cfg-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~ConfigDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Endpoint MustEndpoint(const std::string& url, bool force_path_style = false,
                      const std::string& region = "us-east-1") {
  ClientConfig c;
  c.endpoint_url = url;
  c.region = region;
  c.force_path_style = force_path_style;
  auto r = Endpoint::FromConfig(c);
  EXPECT_TRUE(r.ok()) << url << ": " << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? r.value() : Endpoint{};
}

TEST(ClientConfig, DefaultsWithEmptyEnvironment) {
  auto r = ResolveClientConfig({}, {});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->endpoint_url, "");
  EXPECT_EQ(r->region, "us-east-1");
  EXPECT_FALSE(r->force_path_style);
  EXPECT_TRUE(r->verify_tls);
  EXPECT_EQ(r->ca_bundle, "");
  EXPECT_EQ(r->credentials.profile, "");
  EXPECT_FALSE(r->credentials.no_sign_request);
}

TEST(ClientConfig, FlagsBeatEnvironmentBeatsFile) {
  ConfigDir dir;
  const std::string cfg = dir.Write("config",
                                    "[profile p]\nregion = ap-south-1\n"
                                    "endpoint_url = http://file-endpoint:1\n"
                                    "s3 =\n  addressing_style = path\n");
  const std::string ca = dir.Write("ca.pem", "not really a cert");
  EnvMap env = {{"AWS_CONFIG_FILE", cfg},
                {"AWS_PROFILE", "p"},
                {"AWS_REGION", "eu-west-3"},
                {"AWS_DEFAULT_REGION", "eu-west-2"},
                {"AWS_ENDPOINT_URL", "http://env-endpoint:2"},
                {"AWS_CA_BUNDLE", ca}};

  // File only.
  {
    EnvMap file_only = {{"AWS_CONFIG_FILE", cfg}, {"AWS_PROFILE", "p"}};
    auto r = ResolveClientConfig({}, file_only);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(r->region, "ap-south-1");
    EXPECT_EQ(r->endpoint_url, "http://file-endpoint:1");
    EXPECT_TRUE(r->force_path_style);
  }
  // Environment over file.
  {
    auto r = ResolveClientConfig({}, env);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(r->region, "eu-west-3");
    EXPECT_EQ(r->endpoint_url, "http://env-endpoint:2");
    EXPECT_EQ(r->ca_bundle, ca);
  }
  // AWS_DEFAULT_REGION when AWS_REGION is absent; service-specific endpoint first.
  {
    EnvMap e = env;
    e.erase("AWS_REGION");
    e["AWS_ENDPOINT_URL_S3"] = "http://s3-only:3";
    auto r = ResolveClientConfig({}, e);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->region, "eu-west-2");
    EXPECT_EQ(r->endpoint_url, "http://s3-only:3");
  }
  // Flags over everything.
  {
    ClientConfigOverrides o;
    o.region = "us-west-2";
    o.endpoint_url = "https://flag.example.com";
    o.force_path_style = false;
    o.ca_bundle = cfg;  // any readable file
    o.verify_tls = false;
    o.no_sign_request = true;
    auto r = ResolveClientConfig(o, env);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(r->region, "us-west-2");
    EXPECT_EQ(r->endpoint_url, "https://flag.example.com");
    EXPECT_FALSE(r->force_path_style);
    EXPECT_EQ(r->ca_bundle, cfg);
    EXPECT_FALSE(r->verify_tls);
    EXPECT_TRUE(r->credentials.no_sign_request);
  }
  // --profile selects another section; it reaches the credentials options.
  {
    dir.Write("config2", "[default]\nregion = sa-east-1\n[profile q]\nregion = ca-central-1\n");
    ClientConfigOverrides o;
    o.profile = "q";
    auto r = ResolveClientConfig(o, {{"AWS_CONFIG_FILE", dir.path() + "/config2"}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->region, "ca-central-1");
    EXPECT_EQ(r->credentials.profile, "q");
    auto d = ResolveClientConfig({}, {{"AWS_CONFIG_FILE", dir.path() + "/config2"}});
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->region, "sa-east-1");
  }
  // AWS_IGNORE_CONFIGURED_ENDPOINT_URLS drops env and file endpoints.
  {
    EnvMap e = env;
    e["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true";
    auto r = ResolveClientConfig({}, e);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->endpoint_url, "");
  }
}

TEST(ClientConfig, RejectsBadValues) {
  ConfigDir dir;
  auto bad_ca = ResolveClientConfig({}, {{"AWS_CA_BUNDLE", dir.path() + "/nope.pem"}});
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_EQ(bad_ca.error().errno_value, EINVAL);
  EXPECT_NE(bad_ca.error().message.find("nope.pem"), std::string::npos);

  auto bad_region = ResolveClientConfig({}, {{"AWS_REGION", "us east/1"}});
  ASSERT_FALSE(bad_region.ok());
  EXPECT_NE(bad_region.error().message.find("region"), std::string::npos);

  auto bad_url = ResolveClientConfig({}, {{"AWS_ENDPOINT_URL", "ftp://x"}});
  ASSERT_FALSE(bad_url.ok());
  EXPECT_NE(bad_url.error().message.find("ftp://x"), std::string::npos);

  const std::string cfg = dir.Write("c", "[default]\ns3 =\n  addressing_style = sideways\n");
  auto bad_style = ResolveClientConfig({}, {{"AWS_CONFIG_FILE", cfg}});
  ASSERT_FALSE(bad_style.ok());
  EXPECT_NE(bad_style.error().message.find("sideways"), std::string::npos);
}

TEST(ClientConfigEndpoint, AwsDefaultIsVirtualHosted) {
  ClientConfig c;
  c.region = "eu-central-1";
  auto ep = Endpoint::FromConfig(c);
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->scheme, "https");
  EXPECT_EQ(ep->host, "s3.eu-central-1.amazonaws.com");
  EXPECT_EQ(ep->port, 0);
  EXPECT_FALSE(ep->path_style);
  EXPECT_EQ(ep->HostFor("bkt"), "bkt.s3.eu-central-1.amazonaws.com");
  EXPECT_EQ(ep->PathFor("bkt", "a b/c+d%?#é"), "/a%20b/c%2Bd%25%3F%23%C3%A9");
  EXPECT_EQ(ep->PathFor("bkt", ""), "/");
  EXPECT_EQ(ep->Origin("bkt"), "https://bkt.s3.eu-central-1.amazonaws.com");
  // ListBuckets: no bucket.
  EXPECT_EQ(ep->HostFor(""), "s3.eu-central-1.amazonaws.com");
  EXPECT_EQ(ep->PathFor("", ""), "/");
  // Dotted buckets over https go path-style to keep the wildcard cert valid.
  EXPECT_EQ(ep->HostFor("my.bucket"), "s3.eu-central-1.amazonaws.com");
  EXPECT_EQ(ep->PathFor("my.bucket", "k"), "/my.bucket/k");
  // Names that are not DNS labels too.
  EXPECT_EQ(ep->HostFor("My_Bucket"), "s3.eu-central-1.amazonaws.com");
  EXPECT_EQ(ep->UrlFor("bkt", "k", {{"uploadId", "a/b"}, {"partNumber", "2"}}),
            "https://bkt.s3.eu-central-1.amazonaws.com/k?partNumber=2&uploadId=a%2Fb");
}

TEST(ClientConfigEndpoint, ForcePathStyle) {
  const Endpoint ep = MustEndpoint("https://storage.example.com", true);
  EXPECT_TRUE(ep.path_style);
  EXPECT_EQ(ep.HostFor("b"), "storage.example.com");
  EXPECT_EQ(ep.PathFor("bkt", "dir/file name"), "/bkt/dir/file%20name");
  EXPECT_EQ(ep.PathFor("bkt", ""), "/bkt");
  EXPECT_EQ(ep.PathFor("", ""), "/");
  EXPECT_EQ(ep.UrlFor("bkt", "", {{"list-type", "2"}, {"prefix", "a b"}}),
            "https://storage.example.com/bkt?list-type=2&prefix=a%20b");
}

TEST(ClientConfigEndpoint, CustomEndpointVirtualHostedByDefault) {
  const Endpoint ep = MustEndpoint("https://storage.example.com:8443");
  EXPECT_FALSE(ep.path_style);
  EXPECT_EQ(ep.port, 8443);
  EXPECT_EQ(ep.HostFor("bkt"), "bkt.storage.example.com:8443");
  EXPECT_EQ(ep.PathFor("bkt", "k"), "/k");
  EXPECT_EQ(ep.Origin("bkt"), "https://bkt.storage.example.com:8443");
  // Plain http keeps dotted buckets virtual (no certificate to break).
  const Endpoint plain = MustEndpoint("http://storage.example.com");
  EXPECT_EQ(plain.HostFor("a.b"), "a.b.storage.example.com");
}

TEST(ClientConfigEndpoint, IpAndLocalhostImplyPathStyle) {
  for (const char* url : {"http://127.0.0.1:4568", "http://localhost:9000", "http://LOCALHOST",
                          "http://[::1]:9000", "http://minio:9000"}) {
    const Endpoint ep = MustEndpoint(url);
    EXPECT_TRUE(ep.path_style) << url;
  }
  const Endpoint ep = MustEndpoint("http://127.0.0.1:4568");
  EXPECT_EQ(ep.HostFor("bkt"), "127.0.0.1:4568");
  EXPECT_EQ(ep.PathFor("bkt", "k"), "/bkt/k");
  EXPECT_EQ(ep.Origin("bkt"), "http://127.0.0.1:4568");
  const Endpoint v6 = MustEndpoint("http://[::1]:9000");
  EXPECT_EQ(v6.host, "[::1]");
  EXPECT_EQ(v6.HostFor("bkt"), "[::1]:9000");
  // An IP-looking name with too many labels is a host name.
  EXPECT_FALSE(MustEndpoint("http://1.2.3.4.example").path_style);
}

TEST(ClientConfigEndpoint, DefaultPortIsImplicitAndBasePathKept) {
  const Endpoint ep = MustEndpoint("https://gw.example.com:443/s3/api/", true);
  EXPECT_EQ(ep.port, 0);
  EXPECT_EQ(ep.base_path, "/s3/api");
  EXPECT_EQ(ep.HostFor("b"), "gw.example.com");
  EXPECT_EQ(ep.PathFor("bkt", "x y"), "/s3/api/bkt/x%20y");
  EXPECT_EQ(ep.PathFor("", ""), "/s3/api/");
  EXPECT_EQ(MustEndpoint("http://h.example.com:80").port, 0);
  EXPECT_EQ(MustEndpoint("http://h.example.com:443").port, 443);
  EXPECT_EQ(MustEndpoint("HTTP://H.Example.COM/").base_path, "");
  EXPECT_EQ(MustEndpoint("HTTP://H.Example.COM/").host, "h.example.com");
}

TEST(ClientConfigEndpoint, RejectsGarbage) {
  for (const char* url :
       {"storage.example.com", "ftp://h", "http://", "http://:9000", "http://h:0", "http://h:99999",
        "http://h:12ab", "http://h:", "http://user:pw@h", "http://h/?x=1", "http://h#f",
        "http://ho st", "http://[::1", "http://[::1]x", "://h"}) {
    ClientConfig c;
    c.endpoint_url = url;
    auto r = Endpoint::FromConfig(c);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.error().errno_value, EINVAL) << url;
    EXPECT_NE(r.error().message.find(url), std::string::npos) << r.error().message;
  }
}

TEST(ClientConfigEndpoint, KeysNeedingEncoding) {
  const Endpoint ep = MustEndpoint("http://127.0.0.1:1");
  EXPECT_EQ(ep.PathFor("b", "a+b"), "/b/a%2Bb");
  EXPECT_EQ(ep.PathFor("b", "100%"), "/b/100%25");
  EXPECT_EQ(ep.PathFor("b", "q?x#y"), "/b/q%3Fx%23y");
  EXPECT_EQ(ep.PathFor("b", "~tilde-_."), "/b/~tilde-_.");
  const std::string long_key(1024, 'k');
  EXPECT_EQ(ep.PathFor("b", long_key), "/b/" + long_key);
}

}  // namespace
}  // namespace bucketfs::s3
