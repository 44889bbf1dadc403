// DataWarmer: see data_warmer.h.
#include "mount-tools/data_warmer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

namespace bucketfs::tools {
namespace {

constexpr size_t kReadSize = 1 << 20;

// Reads `path` to its end; 0 or the errno that stopped it.
int ReadFile(const std::string& path, std::vector<char>& buf, std::atomic<uint64_t>& bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return err;
}

}  // namespace

Result<std::vector<std::string>> DataWarmer::ListFiles(const std::string& root) {
  std::vector<std::string> files;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(root, ec), end;
  if (ec) return MakeError(ec.value(), "Warm", root + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return MakeError(ec.value(), "Warm", ec.message());
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

DataWarmCounts DataWarmer::Run(const std::vector<std::string>& files) {
  bytes_ = 0;
  std::atomic<size_t> next{0};
  std::mutex mu;
  DataWarmCounts counts;
  auto work = [&] {
    std::vector<char> buf(kReadSize);
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      const int err = ReadFile(files[i], buf, bytes_);
      std::lock_guard<std::mutex> lock(mu);
      if (err == 0) {
        ++counts.files;
      } else if (counts.errors++ == 0) {
        counts.first_error = files[i] + ": " + std::strerror(err);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < threads_; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  counts.bytes = bytes_.load();
  return counts;
}

}  // namespace bucketfs::tools
