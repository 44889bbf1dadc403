#include "mount-tools/mount_options.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace bucketfs::tools {
namespace {

constexpr MountDefaults kDefaults{.uid = 1000, .gid = 100};

Result<ParsedMountCommand> Parse(std::vector<std::string> rest) {
  rest.insert(rest.begin(), "bucketfs");
  return ParseMountCommand(rest, kDefaults);
}

MountOptions ParseOk(std::vector<std::string> rest) {
  auto r = Parse(std::move(rest));
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return {};
  EXPECT_FALSE(r->help);
  return r->options;
}

std::string ParseError(std::vector<std::string> rest) {
  auto r = Parse(std::move(rest));
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.error().errno_value, EINVAL);
  EXPECT_EQ(r.error().code, "Usage");
  return r.error().message;
}

bool HasFuseOption(const MountOptions& o, const std::string& opt) {
  const auto& v = o.fuse.fuse_options;
  return std::find(v.begin(), v.end(), opt) != v.end();
}

TEST(MountSourceTest, Forms) {
  auto b = ParseMountSource("s3://bucket");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bucket, "bucket");
  EXPECT_EQ(b->prefix, "");
  auto slash = ParseMountSource("s3://bucket/");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(slash->prefix, "");
  auto p = ParseMountSource("s3://bucket/a/b");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->bucket, "bucket");
  EXPECT_EQ(p->prefix, "a/b/");
  auto p2 = ParseMountSource("s3://bucket/a/b/");
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2->prefix, "a/b/");
  auto all = ParseMountSource("s3://");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->bucket, "");
  EXPECT_EQ(all->prefix, "");
}

TEST(MountSourceTest, Rejects) {
  EXPECT_FALSE(ParseMountSource("bucket").ok());
  EXPECT_FALSE(ParseMountSource("http://bucket").ok());
  EXPECT_FALSE(ParseMountSource("s3:///key").ok());
  EXPECT_FALSE(ParseMountSource("").ok());
}

TEST(MountOptionsTest, Defaults) {
  MountOptions o = ParseOk({"s3://b", "/mnt"});
  EXPECT_EQ(o.source, "s3://b");
  EXPECT_EQ(o.fs.bucket, "b");
  EXPECT_EQ(o.fs.prefix, "");
  EXPECT_EQ(o.fuse.mountpoint, "/mnt");
  EXPECT_EQ(o.fs.uid, 1000u);
  EXPECT_EQ(o.fs.gid, 100u);
  EXPECT_EQ(o.fs.file_mode, 0644u);
  EXPECT_EQ(o.fs.dir_mode, 0755u);
  EXPECT_FALSE(o.fs.read_only);
  EXPECT_FALSE(o.fs.allow_delete);
  EXPECT_FALSE(o.fuse.foreground);
  EXPECT_FALSE(o.fuse.debug);
  EXPECT_FALSE(o.fuse.allow_other);
  EXPECT_EQ(o.log.level, spdlog::level::info);
  EXPECT_EQ(o.log.file, "");
  EXPECT_FALSE(o.client.endpoint_url.has_value());
  EXPECT_FALSE(o.client.region.has_value());
  // fsname, subtype, ro and default_permissions are RunFuseSession's defaults.
  EXPECT_TRUE(o.fuse.fuse_options.empty());
}

TEST(MountOptionsTest, Help) {
  auto r = Parse({"--help"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help);
  auto h = Parse({"s3://b", "/mnt", "-h"});
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->help);
  std::string usage = MountUsage();
  EXPECT_NE(usage.find("--allow-delete"), std::string::npos);
  EXPECT_NE(usage.find("--metadata-ttl"), std::string::npos);
  EXPECT_NE(usage.find("--max-memory"), std::string::npos);
}

TEST(MountOptionsTest, Flags) {
  MountOptions o = ParseOk({"s3://b/data",
                            "/mnt",
                            "--read-only",
                            "--allow-delete",
                            "--allow-overwrite",
                            "--allow-dir-rename",
                            "--dir-markers",
                            "--allow-other",
                            "--uid",
                            "7",
                            "--gid=8",
                            "--file-mode",
                            "0600",
                            "--dir-mode=700",
                            "--metadata-ttl",
                            "30",
                            "--negative-ttl=0.5",
                            "--part-size",
                            "32M",
                            "--max-threads",
                            "4",
                            "--gets-on-fuse-threads=2",
                            "--cache",
                            "/var/c",
                            "--log-level",
                            "trace",
                            "--log-file",
                            "/tmp/l",
                            "-f"});
  EXPECT_EQ(o.fs.prefix, "data/");
  EXPECT_TRUE(o.fs.read_only);
  EXPECT_TRUE(o.fs.allow_delete);
  EXPECT_TRUE(o.fs.allow_overwrite);
  EXPECT_TRUE(o.fs.allow_dir_rename);
  EXPECT_TRUE(o.fs.dir_markers);
  EXPECT_TRUE(o.fuse.allow_other);
  EXPECT_EQ(o.fs.uid, 7u);
  EXPECT_EQ(o.fs.gid, 8u);
  EXPECT_EQ(o.fs.file_mode, 0600u);
  EXPECT_EQ(o.fs.dir_mode, 0700u);
  EXPECT_DOUBLE_EQ(o.fs.metadata_ttl, 30);
  EXPECT_DOUBLE_EQ(o.fs.negative_ttl, 0.5);
  EXPECT_EQ(o.fs.write_part_size, 32u << 20);
  EXPECT_EQ(o.fs.max_threads, 4);
  EXPECT_EQ(o.fuse.max_threads, 4);
  EXPECT_EQ(o.fs.gets_on_fuse_threads, 2);
  EXPECT_EQ(o.fs.cache_dir, "/var/c");
  EXPECT_EQ(o.log.level, spdlog::level::trace);
  EXPECT_EQ(o.log.file, "/tmp/l");
  EXPECT_TRUE(o.fuse.foreground);
}

TEST(MountOptionsTest, ClientOverrides) {
  MountOptions o =
      ParseOk({"s3://b", "/mnt", "--region", "eu-west-1", "--endpoint-url=http://127.0.0.1:9000",
               "--force-path-style", "--profile", "p", "--no-sign-request", "--ca-bundle",
               "/ca.pem", "--no-verify-ssl"});
  EXPECT_EQ(o.client.region, "eu-west-1");
  EXPECT_EQ(o.client.endpoint_url, "http://127.0.0.1:9000");
  EXPECT_EQ(o.client.force_path_style, true);
  EXPECT_EQ(o.client.profile, "p");
  EXPECT_EQ(o.client.no_sign_request, true);
  EXPECT_EQ(o.client.ca_bundle, "/ca.pem");
  EXPECT_EQ(o.client.verify_tls, false);
}

TEST(MountOptionsTest, FstabSpellings) {
  // What mount.fuse3 runs for `s3://b /mnt fuse.bucketfs ro,...` in fstab.
  MountOptions o = ParseOk(
      {"s3://b", "/mnt", "-o",
       "ro,allow_other,endpoint_url=http://h:1/,region=r,force_path_style,metadata_ttl="
       "indefinite,uid=5,gid=6,file_mode=640,dir_mode=750,allow_delete,cache=/c,prefix=p,"
       "log_level=debug,log_file=/l,max_threads=2,part_size=8MiB,no_sign_request,dev,suid"});
  EXPECT_TRUE(o.fs.read_only);
  EXPECT_TRUE(o.fuse.allow_other);
  EXPECT_EQ(o.client.endpoint_url, "http://h:1/");
  EXPECT_EQ(o.client.region, "r");
  EXPECT_EQ(o.client.force_path_style, true);
  EXPECT_EQ(o.client.no_sign_request, true);
  EXPECT_DOUBLE_EQ(o.fs.metadata_ttl, kIndefiniteTtlSeconds);
  EXPECT_EQ(o.fs.uid, 5u);
  EXPECT_EQ(o.fs.gid, 6u);
  EXPECT_EQ(o.fs.file_mode, 0640u);
  EXPECT_EQ(o.fs.dir_mode, 0750u);
  EXPECT_TRUE(o.fs.allow_delete);
  EXPECT_EQ(o.fs.cache_dir, "/c");
  EXPECT_EQ(o.fs.prefix, "p/");
  EXPECT_EQ(o.log.level, spdlog::level::debug);
  EXPECT_EQ(o.log.file, "/l");
  EXPECT_EQ(o.fs.max_threads, 2);
  EXPECT_EQ(o.fs.write_part_size, 8u << 20);
  EXPECT_TRUE(HasFuseOption(o, "dev"));
  EXPECT_TRUE(HasFuseOption(o, "suid"));
}

TEST(MountOptionsTest, AttachedAndRepeatedDashO) {
  MountOptions o = ParseOk({"-oallow_delete", "s3://b", "-o", "rw", "/mnt", "-o", "read_only"});
  EXPECT_TRUE(o.fs.allow_delete);
  EXPECT_TRUE(o.fs.read_only);  // later wins
  MountOptions rw = ParseOk({"s3://b", "/mnt", "-o", "ro,rw"});
  EXPECT_FALSE(rw.fs.read_only);
}

TEST(MountOptionsTest, GenericMountOptionsIgnored) {
  MountOptions o = ParseOk({"s3://b", "/mnt", "-o",
                            "defaults,auto,noauto,user,nouser,users,_netdev,nofail,"
                            "x-systemd.automount,x-systemd.requires=network-online.target,"
                            "user=alice,comment=x,,"});
  EXPECT_TRUE(o.fuse.fuse_options.empty());
}

TEST(MountOptionsTest, EnvFile) {
  EXPECT_EQ(ParseOk({"s3://b", "/mnt"}).env_file, "");
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--env-file", "/etc/bucketfs/a.env"}).env_file,
            "/etc/bucketfs/a.env");
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "-o", "_netdev,env_file=/etc/b.env,nofail"}).env_file,
            "/etc/b.env");
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--env-file"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "-o", "env_file="}).find("empty file name"),
            std::string::npos);
}

TEST(MountOptionsTest, PassthroughOptions) {
  MountOptions o = ParseOk({"s3://b", "/mnt", "-o",
                            "nodev,nosuid,noexec,noatime,fsname=data,subtype=s3,"
                            "default_permissions,max_read=131072,auto_unmount"});
  for (const char* opt : {"nodev", "nosuid", "noexec", "noatime", "fsname=data", "subtype=s3",
                          "default_permissions", "max_read=131072", "auto_unmount"}) {
    EXPECT_TRUE(HasFuseOption(o, opt)) << opt;
  }
}

TEST(MountOptionsTest, DebugImpliesForegroundAndDebugLevel) {
  MountOptions o = ParseOk({"s3://b", "/mnt", "-d"});
  EXPECT_TRUE(o.fuse.foreground);
  EXPECT_TRUE(o.fuse.debug);
  EXPECT_EQ(o.log.level, spdlog::level::debug);
  MountOptions explicit_level = ParseOk({"s3://b", "/mnt", "--debug", "--log-level", "warn"});
  EXPECT_EQ(explicit_level.log.level, spdlog::level::warn);
  MountOptions fg = ParseOk({"s3://b", "/mnt", "--foreground"});
  EXPECT_TRUE(fg.fuse.foreground);
  EXPECT_FALSE(fg.fuse.debug);
}

TEST(MountOptionsTest, AllBucketsAndPrefixFlag) {
  MountOptions all = ParseOk({"s3://", "/mnt"});
  EXPECT_EQ(all.fs.bucket, "");
  MountOptions p = ParseOk({"s3://b", "/mnt", "--prefix", "x/y"});
  EXPECT_EQ(p.fs.prefix, "x/y/");
  EXPECT_NE(ParseError({"s3://", "/mnt", "--prefix", "x"}).find("needs a bucket"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b/a", "/mnt", "--prefix", "x"}).find("twice"), std::string::npos);
}

TEST(MountOptionsTest, DoubleDashEndsOptions) {
  MountOptions o = ParseOk({"--", "s3://b", "-weird-dir"});
  EXPECT_EQ(o.fuse.mountpoint, "-weird-dir");
}

TEST(MountOptionsTest, Readdirplus) {
  using P = fs::FsConfig::ReaddirPlus;
  EXPECT_EQ(ParseOk({"s3://b", "/mnt"}).fs.readdirplus, P::kAuto);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--readdirplus", "off"}).fs.readdirplus, P::kOff);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "-o", "readdirplus=on"}).fs.readdirplus, P::kOn);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--readdirplus=maybe"}).find("'maybe'"),
            std::string::npos);
}

TEST(MountOptionsTest, UsageErrors) {
  EXPECT_NE(ParseError({"s3://b"}).find("MOUNTPOINT"), std::string::npos);
  EXPECT_NE(ParseError({}).find("SOURCE"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "/extra"}).find("'/extra'"), std::string::npos);
  EXPECT_NE(ParseError({"b", "/mnt"}).find("s3://"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--bogus"}).find("'--bogus'"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "-x"}).find("'-x'"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "-o", "allow_delete,bogus=1"}).find("'bogus'"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--uid"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "-o"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "-o", "uid"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--read-only=yes"}).find("takes no value"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--uid", "alice"}).find("uid"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--file-mode", "0999"}).find("octal"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--metadata-ttl", "-1"}).find("seconds"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--part-size", "1M"}).find("outside"), std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--max-threads", "0"}).find("max-threads"),
            std::string::npos);
  EXPECT_NE(
      ParseError({"s3://b", "/mnt", "--gets-on-fuse-threads", "-1"}).find("gets-on-fuse-threads"),
      std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--log-level", "loud"}).find("log level"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--allow-other", "--allow-root"}).find("combined"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--endpoint-url="}).find("empty"), std::string::npos);
}

TEST(MountOptionsTest, DirectIo) {
  EXPECT_FALSE(ParseOk({"s3://b", "/mnt"}).fs.direct_io);
  EXPECT_TRUE(ParseOk({"s3://b", "/mnt", "--direct-io"}).fs.direct_io);
  // fstab spelling; ours, not handed to libfuse (its low-level session has no
  // such option and would refuse the mount).
  MountOptions o = ParseOk({"s3://b", "/mnt", "-o", "direct_io,ro"});
  EXPECT_TRUE(o.fs.direct_io);
  EXPECT_FALSE(HasFuseOption(o, "direct_io"));
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--direct-io=1"}).find("takes no value"),
            std::string::npos);
}

TEST(MountOptionsTest, UploadMemoryAndConcurrency) {
  const MountOptions defaults = ParseOk({"s3://b", "/mnt"});
  EXPECT_EQ(defaults.fs.max_upload_memory, 0u);  // the writers' default
  EXPECT_EQ(defaults.fs.max_upload_parts_in_flight, 4);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--max-upload-memory", "1G"}).fs.max_upload_memory,
            1ull << 30);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "-o", "max_upload_memory=64M"}).fs.max_upload_memory,
            64u << 20);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--upload-concurrency", "8"}).fs.max_upload_parts_in_flight,
            8);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "-o", "upload_concurrency=1"}).fs.max_upload_parts_in_flight,
            1);
  // Two parts is the least; checked whatever the order of the flags.
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--max-upload-memory", "10M", "--part-size", "5M"})
                .fs.max_upload_memory,
            10u << 20);
  const std::string small = ParseError({"s3://b", "/mnt", "--max-upload-memory", "31M"});
  EXPECT_NE(small.find("'--max-upload-memory': 31 MiB is less than two upload parts (2 x 16 MiB"),
            std::string::npos)
      << small;
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--max-upload-memory", "0"}).find("more than 0"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--upload-concurrency", "0"}).find("upload-concurrency"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--upload-concurrency", "65"}).find("upload-concurrency"),
            std::string::npos);
  EXPECT_NE(
      ParseError({"s3://b", "/mnt", "--upload-concurrency", "four"}).find("upload-concurrency"),
      std::string::npos);
}

TEST(MountOptionsTest, RandomWholeMax) {
  EXPECT_EQ(ParseOk({"s3://b", "/mnt"}).fs.random_whole_max, 1ull << 30);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--random-whole-max", "0"}).fs.random_whole_max, 0u);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "-o", "random_whole_max=256M"}).fs.random_whole_max,
            256u << 20);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--random-whole-max", "lots"}).find("not a size"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--random-whole-max", "65G"}).find("outside"),
            std::string::npos);
}

TEST(MountOptionsTest, MaxMemory) {
  EXPECT_EQ(ParseOk({"s3://b", "/mnt"}).fs.max_memory, 0u);  // the read path's default
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--max-memory", "512M"}).fs.max_memory, 512u << 20);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--max-memory=2G"}).fs.max_memory, 2ull << 30);
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "-o", "ro,max_memory=1GiB"}).fs.max_memory, 1ull << 30);
  // Two read parts is the least; checked whatever the order of the flags.
  EXPECT_EQ(ParseOk({"s3://b", "/mnt", "--max-memory", "16M"}).fs.max_memory, 16u << 20);
  EXPECT_EQ(
      ParseOk({"s3://b", "/mnt", "--max-memory", "2M", "--read-part-size", "1M"}).fs.max_memory,
      2u << 20);

  EXPECT_NE(ParseError({"s3://b", "/mnt", "--max-memory", "0"}).find("more than 0"),
            std::string::npos);
  const std::string small = ParseError({"s3://b", "/mnt", "--max-memory", "15M"});
  EXPECT_NE(small.find("'--max-memory': 15 MiB is less than two read parts (2 x 8 MiB"),
            std::string::npos)
      << small;
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--max-memory", "32M", "--read-part-size", "32M"})
                .find("2 x 32 MiB"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "-o", "max_memory=1000"}).find("1000 bytes"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--max-memory", "lots"}).find("not a size"),
            std::string::npos);
  EXPECT_NE(ParseError({"s3://b", "/mnt", "--max-memory"}).find("needs a value"),
            std::string::npos);
}

TEST(ParseTtlTest, Values) {
  EXPECT_DOUBLE_EQ(*ParseTtl("0"), 0);
  EXPECT_DOUBLE_EQ(*ParseTtl("2.5"), 2.5);
  EXPECT_DOUBLE_EQ(*ParseTtl("indefinite"), kIndefiniteTtlSeconds);
  EXPECT_FALSE(ParseTtl("").ok());
  EXPECT_FALSE(ParseTtl("5s").ok());
  EXPECT_FALSE(ParseTtl("nan").ok());
  EXPECT_FALSE(ParseTtl("inf").ok());
}

TEST(ParseSizeTest, Values) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("8M"), 8u << 20);
  EXPECT_EQ(*ParseSize("8MiB"), 8u << 20);
  EXPECT_EQ(*ParseSize("8MB"), 8u << 20);
  EXPECT_EQ(*ParseSize("1G"), 1u << 30);
  EXPECT_EQ(*ParseSize("12B"), 12u);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("M").ok());
  EXPECT_FALSE(ParseSize("8X").ok());
  EXPECT_FALSE(ParseSize("8Mx").ok());
  EXPECT_FALSE(ParseSize("8Mb").ok());  // bits, not bytes: refused by the one parser
  EXPECT_EQ(ParseSize("8Mb").error().code, "Usage");
  EXPECT_FALSE(ParseSize("99999999999T").ok());
}

TEST(ParseModeTest, Values) {
  EXPECT_EQ(*ParseMode("644"), 0644u);
  EXPECT_EQ(*ParseMode("0755"), 0755u);
  EXPECT_EQ(*ParseMode("1777"), 01777u);
  EXPECT_FALSE(ParseMode("").ok());
  EXPECT_FALSE(ParseMode("8").ok());
  EXPECT_FALSE(ParseMode("17777").ok());
  EXPECT_FALSE(ParseMode("rw-").ok());
}

TEST(ParseLogLevelTest, Values) {
  EXPECT_EQ(*ParseLogLevel("trace"), spdlog::level::trace);
  EXPECT_EQ(*ParseLogLevel("warning"), spdlog::level::warn);
  EXPECT_EQ(*ParseLogLevel("error"), spdlog::level::err);
  EXPECT_EQ(*ParseLogLevel("off"), spdlog::level::off);
  EXPECT_FALSE(ParseLogLevel("INFO").ok());
}

}  // namespace
}  // namespace bucketfs::tools

namespace bucketfs::tools {
namespace {

TEST(MountOptionsMetricsTest, MetricsAddrFlagAndFstab) {
  EXPECT_FALSE(ParseMountCommand({"bucketfs", "s3://b", "/mnt"}, MountDefaults{})
                   ->options.metrics_addr.has_value());
  auto flag =
      ParseMountCommand({"bucketfs", "s3://b", "/mnt", "--metrics-addr", "127.0.0.1:9477"}, {});
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ(flag->options.metrics_addr->port, 9477);
  auto fstab = ParseMountCommand({"bucketfs", "s3://b", "/mnt", "-o", "metrics_addr=[::1]:9"}, {});
  ASSERT_TRUE(fstab.ok());
  EXPECT_EQ(fstab->options.metrics_addr->host, "::1");
  auto bad = ParseMountCommand({"bucketfs", "s3://b", "/mnt", "--metrics-addr", "9477"}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("is not HOST:PORT"), std::string::npos);
  EXPECT_NE(MountUsage().find("--metrics-addr"), std::string::npos);
}

}  // namespace
}  // namespace bucketfs::tools
