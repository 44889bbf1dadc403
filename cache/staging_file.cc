// StagingFile: anonymous 0600 files under the staging directory (see header).
#include "cache/staging_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace bucketfs::cache {
namespace {

Error IoError(int err, const std::string& what) {
  // ENOSPC and EDQUOT mean "disk full" to the application; anything else the
  // disk does wrong is an I/O error.
  const int mapped = (err == ENOSPC || err == EDQUOT) ? ENOSPC : (err == 0 ? EIO : err);
  return MakeError(mapped, mapped == ENOSPC ? "StagingFull" : "StagingIO",
                   what + ": " + std::strerror(err == 0 ? EIO : err));
}

}  // namespace

ssize_t StagingFileOps::PWrite(int fd, const void* buf, size_t n, off_t offset) {
  return ::pwrite(fd, buf, n, offset);
}
ssize_t StagingFileOps::PRead(int fd, void* buf, size_t n, off_t offset) {
  return ::pread(fd, buf, n, offset);
}
int StagingFileOps::FTruncate(int fd, off_t size) { return ::ftruncate(fd, size); }
int StagingFileOps::OpenTmpFile(const char* dir) {
  return ::open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}
int StagingFileOps::Unlink(const char* path) { return ::unlink(path); }

bool StagingSpace::TryAdd(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  for (;;) {
    if (limit_ != 0 && used + bytes > limit_) return false;
    if (used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) break;
  }
  uint64_t now = used + bytes;
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return true;
}

void StagingSpace::Sub(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

Status EnsureStagingDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(ec.value(), "cannot create staging directory " + dir);
  // Only the daemon's user may see what is being written.
  if (::chmod(dir.c_str(), 0700) != 0) {
    return IoError(errno, "cannot set mode 0700 on staging directory " + dir);
  }
  return Status::Ok();
}

Result<std::unique_ptr<StagingFile>> StagingFile::Create(const std::string& dir,
                                                         std::shared_ptr<StagingFileOps> ops,
                                                         std::shared_ptr<StagingSpace> space) {
  if (!ops) ops = std::make_shared<StagingFileOps>();
  int fd = ops->OpenTmpFile(dir.c_str());
  if (fd < 0) {
    // Filesystems without O_TMPFILE: a named file, unlinked at once.
    std::string path = dir + "/bucketfs-staging-XXXXXX";
    std::vector<char> name(path.begin(), path.end());
    name.push_back('\0');
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) return IoError(errno, "cannot create a staging file in " + dir);
    // mkostemp creates it 0600. A file that cannot be unlinked would stay in
    // the directory after a crash, readable by whoever can read the directory
    // later: refuse it rather than write someone's data there.
    if (ops->Unlink(name.data()) != 0) {
      const int err = errno;
      ::close(fd);
      return IoError(err, std::string("cannot unlink new staging file ") + name.data());
    }
  }
  // A second descriptor with O_DIRECT for WriteBuffered (O_DIRECT is a
  // property of the open file, and Read/Write stay buffered). File systems
  // without O_DIRECT (tmpfs before 6.6) refuse it here or at the first write.
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  const int direct_fd = ::open(self.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  return std::unique_ptr<StagingFile>(
      new StagingFile(fd, direct_fd, std::move(ops), std::move(space)));
}

void StagingFile::ReleaseSpace() {
  if (space_ && !space_released_) space_->Sub(size_);
  space_released_ = true;
}

StagingFile::~StagingFile() {
  ReleaseSpace();
  if (direct_fd_ >= 0) ::close(direct_fd_);
  ::close(fd_);
}

Status StagingFile::Grow(uint64_t new_size) {
  if (new_size <= size_) return Status::Ok();
  if (space_ && !space_->TryAdd(new_size - size_)) {
    return MakeError(
        ENOSPC, "StagingFull",
        "staging space limit of " + std::to_string(space_->limit()) + " bytes reached");
  }
  size_ = new_size;
  return Status::Ok();
}

Status StagingFile::Write(uint64_t offset, std::span<const std::byte> data) {
  const uint64_t old_size = size_;
  if (Status s = Grow(offset + data.size()); !s.ok()) return s;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ops_->PWrite(fd_, data.data() + done, data.size() - done,
                             static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;  // pwrite returning 0 means no room
      Error e = IoError(err, "staging write");
      if (space_ && size_ > old_size) space_->Sub(size_ - old_size);
      size_ = old_size;
      return e;
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status StagingFile::PWriteAll(int fd, uint64_t offset, std::span<const std::byte> data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        ops_->PWrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(n < 0 ? errno : ENOSPC, "staging write");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status StagingFile::WriteBuffered(uint64_t offset, std::span<const std::byte> data) {
  constexpr uint64_t kAlign = 4096;  // logical block sizes are at most a page
  const auto addr = reinterpret_cast<uintptr_t>(data.data());
  uint64_t direct = 0;
  if (direct_fd_ >= 0 && direct_ok_.load(std::memory_order_relaxed) && offset % kAlign == 0 &&
      addr % kAlign == 0) {
    direct = data.size() / kAlign * kAlign;
  }
  if (direct > 0) {
    Status s = PWriteAll(direct_fd_, offset, data.first(direct));
    if (!s.ok() && s.error().errno_value == EINVAL) {
      direct_ok_.store(false, std::memory_order_relaxed);  // not supported here
      direct = 0;
    } else if (!s.ok()) {
      return s;
    }
  }
  if (direct == data.size()) return Status::Ok();
  if (Status s = PWriteAll(fd_, offset + direct, data.subspan(direct)); !s.ok()) return s;
  DropCached(offset + direct, data.size() - direct);
  return Status::Ok();
}

Status StagingFile::Read(uint64_t offset, std::span<std::byte> dest) {
  size_t done = 0;
  while (done < dest.size()) {
    ssize_t n =
        ops_->PRead(fd_, dest.data() + done, dest.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(errno, "staging read");
    if (n == 0) {  // past the end of what was written: zeros
      std::memset(dest.data() + done, 0, dest.size() - done);
      break;
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

void StagingFile::DropCached(uint64_t offset, uint64_t len) {
  // DONTNEED starts writeback of dirty pages but keeps those still being
  // written: each range is advised again on the next calls, by when its
  // writeback has usually finished.
  constexpr size_t kKeep = 3;
  MutexLock lock(drain_mu_);
  draining_.emplace_back(offset, len);
  for (const auto& [off, n] : draining_) {
    ::posix_fadvise(fd_, static_cast<off_t>(off), static_cast<off_t>(n), POSIX_FADV_DONTNEED);
  }
  if (draining_.size() > kKeep) draining_.erase(draining_.begin());
}

Status StagingFile::Truncate(uint64_t size) {
  if (ops_->FTruncate(fd_, static_cast<off_t>(size)) != 0) {
    return IoError(errno, "staging truncate");
  }
  if (size < size_) {
    if (space_) space_->Sub(size_ - size);
    size_ = size;
    return Status::Ok();
  }
  return Grow(size);
}

}  // namespace bucketfs::cache
