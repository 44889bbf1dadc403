// KeptUploads: see kept_uploads.h.
#include "fuse/kept_uploads.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

namespace bucketfs::fs {
namespace {

constexpr size_t kCopyChunk = 1 << 20;

Error SystemError(int err, const std::string& what) {
  return MakeError(err, "KeepUpload", what + ": " + std::strerror(err));
}

// Creates `dir` and its missing parents, 0700.
Status MakeDirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return SystemError(errno, part);
  }
  return Status::Ok();
}

Status WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return SystemError(n < 0 ? errno : ENOSPC, "write");
    text.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status WriteFile(const std::string& path, std::string_view text, int flags) {
  const int fd = ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return SystemError(errno, path);
  Status s = WriteAll(fd, text);
  if (::close(fd) != 0 && s.ok()) s = SystemError(errno, path);
  return s;
}

// Writes the `size` bytes `read` serves into the open file `fd`.
Status CopyInto(int fd, uint64_t size, const KeptUploads::ReadFn& read) {
  std::vector<std::byte> buf(kCopyChunk);
  for (uint64_t at = 0; at < size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size - at, buf.size()));
    auto n = read(at, std::span(buf).first(want));
    if (!n.ok()) return n.error();
    if (*n == 0) return MakeError(EIO, "KeepUpload", "the file ended before its size");
    if (Status s = WriteAll(fd, {reinterpret_cast<const char*>(buf.data()), *n}); !s.ok()) {
      return s;
    }
    at += *n;
  }
  return Status::Ok();
}

}  // namespace

KeptUploads::KeptUploads(std::string dir) : dir_(std::move(dir)) {}

Result<KeptUploads::Copy> KeptUploads::Keep(const std::string& bucket, const std::string& key,
                                            uint64_t size, const ReadFn& read) {
  if (Status s = MakeDirs(dir_); !s.ok()) return s.error();
  const std::string name = dir_ + "/" + std::to_string(::getpid()) + "-" +
                           std::to_string(next_.fetch_add(1, std::memory_order_relaxed));
  Copy copy{name + ".data", name + ".info"};
  const int fd = ::open(copy.data_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return SystemError(errno, copy.data_path);
  Status s = CopyInto(fd, size, read);
  if (::close(fd) != 0 && s.ok()) s = SystemError(errno, copy.data_path);
  if (s.ok()) {
    const std::string note = "s3://" + bucket + "/" + key + "\nsize " + std::to_string(size) + "\n";
    s = WriteFile(copy.info_path, note, O_CREAT | O_EXCL);
  }
  if (!s.ok()) {
    Drop(copy);
    return s.error();
  }
  return copy;
}

void KeptUploads::Drop(const Copy& copy) {
  ::unlink(copy.data_path.c_str());
  ::unlink(copy.info_path.c_str());
}

void KeptUploads::Failed(const Copy& copy, const Error& error) {
  kept_.fetch_add(1, std::memory_order_relaxed);
  if (Status s = WriteFile(copy.info_path, "error " + error.ToString() + "\n", O_APPEND); !s.ok()) {
    spdlog::warn("could not note the error beside {}: {}", copy.data_path, s.error().ToString());
  }
  spdlog::error("the bytes of the failed upload are kept in {} (what they are for: {})",
                copy.data_path, copy.info_path);
}

}  // namespace bucketfs::fs
