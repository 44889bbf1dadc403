#include "mount-tools/mount_checks.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "mount-tools/str_cat.h"

namespace bucketfs::tools {
namespace {

void Absolutize(std::string& path) {
  if (path.empty() || path[0] == '/') return;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  if (!ec) path = abs.lexically_normal().string();
}

void Absolutize(std::optional<std::string>& path) {
  if (path) Absolutize(*path);
}

bool IsCredentialsError(const Error& e) {
  return e.code == "AccessDenied" || e.code == "InvalidAccessKeyId" ||
         e.code == "SignatureDoesNotMatch" || e.code == "ExpiredToken" ||
         e.code == "InvalidToken" || e.code == "TokenRefreshRequired" ||
         e.code == "AuthorizationHeaderMalformed" || e.http_status == 403 ||
         e.errno_value == EACCES || e.errno_value == EPERM;
}

}  // namespace

void MakePathsAbsolute(MountOptions& options) {
  Absolutize(options.fuse.mountpoint);
  Absolutize(options.log.file);
  Absolutize(options.fs.cache_dir);
  Absolutize(options.client.ca_bundle);
}

Status CheckMountpoint(const std::string& mountpoint, bool allow_nonempty) {
  if (mountpoint.rfind("/dev/fd/", 0) == 0) return Status::Ok();
  struct stat st {};
  if (::stat(mountpoint.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOTCONN) {
      return MakeError(err, "Mountpoint",
                       StrCat({"mountpoint '", mountpoint,
                               "' is a FUSE mount whose daemon is gone; run `fusermount3 -uz ",
                               mountpoint, "` first"}));
    }
    return MakeError(err, "Mountpoint",
                     StrCat({"mountpoint '", mountpoint, "': ", std::strerror(err),
                             err == ENOENT ? " (create the directory first)" : ""}));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ENOTDIR, "Mountpoint",
                     StrCat({"mountpoint '", mountpoint, "' is not a directory"}));
  }
  if (allow_nonempty) return Status::Ok();
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(mountpoint.c_str()), &::closedir);
  if (!dir) {
    int err = errno;
    // The kernel may answer a dead FUSE mount's root from its attribute cache.
    if (err == ENOTCONN) {
      return MakeError(err, "Mountpoint",
                       StrCat({"mountpoint '", mountpoint,
                               "' is a FUSE mount whose daemon is gone; run `fusermount3 -uz ",
                               mountpoint, "` first"}));
    }
    return MakeError(err, "Mountpoint",
                     StrCat({"cannot read mountpoint '", mountpoint, "': ", std::strerror(err)}));
  }
  while (const dirent* entry = ::readdir(dir.get())) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      return MakeError(ENOTEMPTY, "Mountpoint",
                       StrCat({"mountpoint '", mountpoint,
                               "' is not empty (use -o nonempty to mount over its contents)"}));
    }
  }
  return Status::Ok();
}

// What to check when S3 refuses the credentials.
constexpr std::string_view kCredentialsAdvice =
    "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ~/.aws/credentials, "
    "--profile) or use --no-sign-request for a public bucket";

std::string DescribeBucketError(const std::string& bucket, const Error& error) {
  std::string what = bucket.empty() ? "the bucket list" : StrCat({"bucket '", bucket, "'"});
  if (error.code == "NoSuchBucket" ||
      (!bucket.empty() && error.http_status == 404 && error.code != "NoSuchKey")) {
    return StrCat({"bucket '", bucket, "' does not exist"});
  }
  if (IsCredentialsError(error)) {
    return StrCat(
        {"access to ", what, " was refused (", error.ToString(), "); ", kCredentialsAdvice});
  }
  return StrCat({"cannot reach ", what, ": ", error.ToString()});
}

Status CheckBucketAccess(s3::ObjectClient& client, const fs::FsConfig& config) {
  Error failure;
  if (config.bucket.empty()) {
    auto listed = client.ListBuckets();
    if (listed.ok()) return Status::Ok();
    failure = listed.error();
  } else {
    const s3::ListObjectsV2Params params{
        .bucket = config.bucket, .prefix = config.prefix, .delimiter = "/", .max_keys = 1};
    auto listed = client.ListObjectsV2(params);
    if (listed.ok()) return Status::Ok();
    failure = listed.error();
  }
  Error out = failure;
  out.message = DescribeBucketError(config.bucket, failure);
  return out;
}

}  // namespace bucketfs::tools
