#include "mount-tools/mount_option_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "mount-tools/byte_size.h"
#include "mount-tools/str_cat.h"
#include "s3/s3_limits.h"

namespace bucketfs::tools::option_table {

Error UsageError(std::string message) { return MakeError(EINVAL, "Usage", std::move(message)); }

std::string Underscored(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// "16 MiB", "96 KiB", "1000 bytes": exact, for messages.
std::string ShowSize(uint64_t bytes) {
  if (bytes != 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

namespace {

template <typename Int>
Result<Int> ParseInt(std::string_view text, std::string_view what, Int min, Int max) {
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return UsageError(StrCat({what, ": '", text, "' is not a number in [", std::to_string(min),
                              ", ", std::to_string(max), "]"}));
  }
  return v;
}

Setter Flag(bool fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view) {
    b.opts.fs.*field = true;
    return Status::Ok();
  };
}

Setter ClientString(std::optional<std::string> s3::ClientConfigOverrides::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    if (v.empty()) return UsageError("empty value");
    b.opts.client.*field = std::string(v);
    return Status::Ok();
  };
}

Setter ClientFlag(std::optional<bool> s3::ClientConfigOverrides::*field, bool value) {
  return [field, value](Builder& b, std::string_view) {
    b.opts.client.*field = value;
    return Status::Ok();
  };
}

Setter Ttl(double fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    auto ttl = ParseTtl(v);
    if (!ttl) return ttl.error();
    b.opts.fs.*field = *ttl;
    return Status::Ok();
  };
}

Setter Mode(mode_t fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    auto mode = ParseMode(v);
    if (!mode) return mode.error();
    b.opts.fs.*field = *mode;
    return Status::Ok();
  };
}

Setter PartSize(uint64_t fs::FsConfig::*field, uint64_t min, uint64_t max) {
  return [=](Builder& b, std::string_view v) -> Status {
    auto size = ParseSize(v);
    if (!size) return size.error();
    if (*size < min || *size > max) {
      return UsageError(StrCat({"'", v, "' is outside [", std::to_string(min >> 20), " MiB, ",
                                std::to_string(max >> 20), " MiB]"}));
    }
    b.opts.fs.*field = *size;
    return Status::Ok();
  };
}

// A count within [min, max]; `name` is the option's, for the error.
Setter Count(int fs::FsConfig::*field, const char* name, int min, int max) {
  return [=](Builder& b, std::string_view v) -> Status {
    auto n = ParseInt<int>(v, name, min, max);
    if (!n) return n.error();
    b.opts.fs.*field = *n;
    return Status::Ok();
  };
}

// A memory budget: any size above 0 (checked against its part size in Finish).
Setter Budget(uint64_t fs::FsConfig::*field) {
  return [field](Builder& b, std::string_view v) -> Status {
    auto size = ParseSize(v);
    if (!size) return size.error();
    if (*size == 0) return UsageError("must be more than 0");
    b.opts.fs.*field = *size;
    return Status::Ok();
  };
}

}  // namespace

const std::vector<OptionSpec>& Specs() {
  static const std::vector<OptionSpec> specs = {
      // What is mounted, and how to reach it.
      {"prefix", true,
       [](Builder& b, std::string_view v) -> Status {
         b.prefix_flag = std::string(v);
         return Status::Ok();
       },
       "mount only keys under PREFIX (same as s3://BUCKET/PREFIX)"},
      {"region", true, ClientString(&s3::ClientConfigOverrides::region), "S3 region"},
      {"endpoint-url", true, ClientString(&s3::ClientConfigOverrides::endpoint_url),
       "S3 endpoint, e.g. http://127.0.0.1:9000"},
      {"force-path-style", false, ClientFlag(&s3::ClientConfigOverrides::force_path_style, true),
       "address buckets as ENDPOINT/BUCKET instead of BUCKET.ENDPOINT"},
      {"profile", true, ClientString(&s3::ClientConfigOverrides::profile),
       "profile of ~/.aws/config and ~/.aws/credentials"},
      {"no-sign-request", false, ClientFlag(&s3::ClientConfigOverrides::no_sign_request, true),
       "anonymous access (public buckets)"},
      {"ca-bundle", true, ClientString(&s3::ClientConfigOverrides::ca_bundle),
       "PEM file of CA certificates to trust"},
      {"no-verify-ssl", false, ClientFlag(&s3::ClientConfigOverrides::verify_tls, false),
       "do not verify TLS certificates (insecure)"},
      {"retry-attempts", true,
       [](Builder& b, std::string_view v) -> Status {
         auto n = ParseInt<int>(v, "retry-attempts", 1, 100);
         if (!n) return n.error();
         b.opts.client.max_attempts = *n;
         return Status::Ok();
       },
       "N attempts of each S3 request before its error is returned, the first included (6)"},
      {"stall-timeout", true,
       [](Builder& b, std::string_view v) -> Status {
         auto n = ParseInt<int>(v, "stall-timeout", 1, 3600);
         if (!n) return n.error();
         b.opts.client.stall_timeout = std::chrono::seconds(*n);
         return Status::Ok();
       },
       "SECONDS a response may send less than 1 KiB/s before it is abandoned and retried (30)"},
      {"no-adaptive-rate", false, ClientFlag(&s3::ClientConfigOverrides::adaptive_rate, false),
       "do not slow down when the store answers 503 SlowDown (retries still back off)"},
      // Permissions and mutations.
      {"read-only", false, Flag(&fs::FsConfig::read_only), "refuse every change (EROFS)"},
      {"allow-delete", false, Flag(&fs::FsConfig::allow_delete), "allow unlink and rmdir"},
      {"allow-overwrite", false, Flag(&fs::FsConfig::allow_overwrite),
       "allow replacing existing objects (O_TRUNC, rename onto a file)"},
      {"allow-dir-rename", false, Flag(&fs::FsConfig::allow_dir_rename),
       "allow renaming directories (copies every key)"},
      {"dir-markers", false, Flag(&fs::FsConfig::dir_markers),
       "mkdir writes a zero-byte DIR/ marker object"},
      {"uid", true,
       [](Builder& b, std::string_view v) -> Status {
         auto id = ParseInt<uint32_t>(v, "uid", 0, 0xfffffffeu);
         if (!id) return id.error();
         b.opts.fs.uid = *id;
         return Status::Ok();
       },
       "owner reported for every file (default: you)"},
      {"gid", true,
       [](Builder& b, std::string_view v) -> Status {
         auto id = ParseInt<uint32_t>(v, "gid", 0, 0xfffffffeu);
         if (!id) return id.error();
         b.opts.fs.gid = *id;
         return Status::Ok();
       },
       "group reported for every file (default: yours)"},
      {"file-mode", true, Mode(&fs::FsConfig::file_mode), "permission bits of files (0644)"},
      {"dir-mode", true, Mode(&fs::FsConfig::dir_mode), "permission bits of directories (0755)"},
      {"allow-other", false,
       [](Builder& b, std::string_view) {
         b.opts.fuse.allow_other = true;
         return Status::Ok();
       },
       "let other users access the mount"},
      {"allow-root", false,
       [](Builder& b, std::string_view) {
         b.opts.fuse.allow_root = true;
         return Status::Ok();
       },
       "let root access the mount"},
      // Caching and performance.
      {"metadata-ttl", true, Ttl(&fs::FsConfig::metadata_ttl),
       "SECONDS|indefinite the kernel caches names and attributes (1)"},
      {"negative-ttl", true, Ttl(&fs::FsConfig::negative_ttl),
       "SECONDS|indefinite the kernel caches 'no such file' (0)"},
      {"readdirplus", true,
       [](Builder& b, std::string_view v) -> Status {
         using P = fs::FsConfig::ReaddirPlus;
         if (v == "auto")
           b.opts.fs.readdirplus = P::kAuto;
         else if (v == "on")
           b.opts.fs.readdirplus = P::kOn;
         else if (v == "off")
           b.opts.fs.readdirplus = P::kOff;
         else
           return UsageError(StrCat({"'", v, "' is not auto, on or off"}));
         return Status::Ok();
       },
       "auto|on|off: which directory entries carry attributes; auto: files only for processes that "
       "stat files (auto)"},
      {"cache", true,
       [](Builder& b, std::string_view v) -> Status {
         if (v.empty()) return UsageError("empty directory");
         b.opts.fs.cache_dir = std::string(v);
         return Status::Ok();
       },
       "DIR for the local caches: metadata, and object data (see --max-cache-size)"},
      {"max-cache-size", true,
       [](Builder& b, std::string_view v) -> Status {
         if (!v.empty() && v.back() == '%') {
           auto pct = ParseInt<int>(v.substr(0, v.size() - 1), "max-cache-size", 1, 95);
           if (!pct) return pct.error();
           b.opts.fs.max_cache_percent = *pct;
           b.opts.fs.max_cache_bytes = 0;
           return Status::Ok();
         }
         auto size = ParseSize(v);
         if (!size) return size.error();
         if (*size == 0) return UsageError("must be more than 0");
         b.opts.fs.max_cache_bytes = *size;
         return Status::Ok();
       },
       "SIZE|N% of the --cache file system the data cache may hold (10%); fills also stop while "
       "that file system has less than 5% free"},
      {"cache-fill", true,
       [](Builder& b, std::string_view v) -> Status {
         if (v == "complete")
           b.opts.fs.cache_fill_best_effort = false;
         else if (v == "best-effort")
           b.opts.fs.cache_fill_best_effort = true;
         else
           return UsageError(StrCat({"'", v, "' is not complete or best-effort"}));
         return Status::Ok();
       },
       "complete|best-effort: when the --cache disk writes slower than the store delivers, "
       "readers wait for it so that every byte read is cached (complete), or never wait and "
       "what the disk could not take is fetched again on a later read (complete)"},
      {"no-data-cache", false,
       [](Builder& b, std::string_view) {
         b.opts.fs.data_cache = false;
         return Status::Ok();
       },
       "keep only metadata under --cache, no object data"},
      {"no-passthrough", false,
       [](Builder& b, std::string_view) {
         b.opts.fs.passthrough = false;
         return Status::Ok();
       },
       "serve fully cached files through the daemon; by default the kernel reads them from the "
       "cache itself (FUSE passthrough, Linux 6.9+, needs CAP_SYS_ADMIN; the log says which mode "
       "is active)"},
      {"part-size", true,
       PartSize(&fs::FsConfig::write_part_size, s3::kMinPartSize, s3::kMaxPartSize),
       "SIZE of multipart upload parts (16M)"},
      {"read-part-size", true, PartSize(&fs::FsConfig::read_part_size, 64ull << 10, 1ull << 30),
       "SIZE of ranged reads (8M)"},
      {"random-whole-max", true, PartSize(&fs::FsConfig::random_whole_max, 0, 64ull << 30),
       "SIZE of the largest file fetched whole, in parallel parts kept until close, once its "
       "random reads have sent as many GETs as that takes (1G, and at most 1/4 of --max-memory; "
       "0: never)"},
      {"async-close", false, Flag(&fs::FsConfig::async_close),
       "close() returns once a written file is staged; uploads finish in the background (fsync "
       "of a directory or unmount waits for them)"},
      {"no-link-probe", false,
       [](Builder& b, std::string_view) {
         b.opts.fs.probe_link_types = false;
         return Status::Ok();
       },
       "listed objects of 1 to 4095 bytes are regular files unless a HEAD said they are links "
       "(no HEAD per small file; links made elsewhere show once looked up by name)"},
      {"preserve-attrs", false, Flag(&fs::FsConfig::preserve_attrs),
       "keep mode, uid, gid and mtime in object metadata (s3fs's x-amz-meta-*): chmod, chown and "
       "utimes are stored; every file's first lookup costs a HEAD"},
      {"direct-io", false, Flag(&fs::FsConfig::direct_io),
       "bypass the page cache (faster big reads; no MAP_SHARED mmap)"},
      {"max-memory", true, Budget(&fs::FsConfig::max_memory),
       "SIZE of all read-ahead data (1/4 of RAM or of the cgroup memory limit, 256M..4G)"},
      {"max-upload-memory", true, Budget(&fs::FsConfig::max_upload_memory),
       "SIZE of part buffers of all files being written (256M)"},
      {"upload-concurrency", true,
       Count(&fs::FsConfig::max_upload_parts_in_flight, "upload-concurrency", 1, 64),
       "N parts of each file being written uploaded at once (4)"},
      {"max-threads", true,
       [](Builder& b, std::string_view v) -> Status {
         auto n = ParseInt<int>(v, "max-threads", 1, 1024);
         if (!n) return n.error();
         b.opts.fs.max_threads = *n;
         b.opts.fuse.max_threads = *n;
         return Status::Ok();
       },
       "N FUSE worker threads (16)"},
      {"gets-on-fuse-threads", true,
       Count(&fs::FsConfig::gets_on_fuse_threads, "gets-on-fuse-threads", 0, 1024),
       "N random reads' GETs run on their own FUSE thread (0)"},
      // Process.
      {"log-level", true,
       [](Builder& b, std::string_view v) -> Status {
         auto level = ParseLogLevel(v);
         if (!level) return level.error();
         b.opts.log.level = *level;
         b.log_level_set = true;
         return Status::Ok();
       },
       "trace|debug|info|warn|error|off (info)"},
      {"log-file", true,
       [](Builder& b, std::string_view v) -> Status {
         if (v.empty()) return UsageError("empty file name");
         b.opts.log.file = std::string(v);
         return Status::Ok();
       },
       "FILE to append the log to"},
      {"env-file", true,
       [](Builder& b, std::string_view v) -> Status {
         if (v.empty()) return UsageError("empty file name");
         b.opts.env_file = std::string(v);
         return Status::Ok();
       },
       "FILE of AWS_* settings (KEY=VALUE lines, mode 0600)"},
      {"foreground", false,
       [](Builder& b, std::string_view) {
         b.opts.fuse.foreground = true;
         return Status::Ok();
       },
       "(-f) stay in the foreground"},
      {"debug", false,
       [](Builder& b, std::string_view) {
         b.debug = true;
         return Status::Ok();
       },
       "(-d) foreground, debug log and libfuse's request trace"},
      {"metrics-addr", true,
       [](Builder& b, std::string_view v) -> Status {
         auto addr = ParseHostPort(v);
         if (!addr) return UsageError(addr.error().message);
         b.opts.metrics_addr = *addr;
         return Status::Ok();
       },
       "HOST:PORT serving Prometheus metrics at /metrics, e.g. 127.0.0.1:9477 (beyond loopback "
       "it tells anyone who can connect your bucket's name and traffic)"},
      {"nonempty", false,
       [](Builder& b, std::string_view) {
         b.opts.allow_nonempty = true;
         return Status::Ok();
       },
       "allow mounting over a non-empty directory"},
  };
  return specs;
  // The analyzer loses the static table's std::function targets, which live until exit.
}  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)

const OptionSpec* FindByFlag(std::string_view name) {
  for (const auto& spec : Specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const OptionSpec* FindByFstab(std::string_view name) {
  for (const auto& spec : Specs()) {
    if (Underscored(spec.name) == name) return &spec;
  }
  return nullptr;
}

}  // namespace bucketfs::tools::option_table
