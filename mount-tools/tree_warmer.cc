// TreeWarmer: see tree_warmer.h.
#include "mount-tools/tree_warmer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace bucketfs::tools {
namespace {

// The queue and the tallies every walking thread shares.
struct WalkState {
  Mutex mu;
  CondVar cv;
  std::deque<std::string> queue GUARDED_BY(mu);  // directories not yet read
  size_t busy GUARDED_BY(mu) = 0;                // directories being read
  WarmCounts counts GUARDED_BY(mu);
};

// Reads one directory; subdirectories go to `subdirs`. Returns 0 or an errno.
int ReadOne(const std::string& dir, std::vector<std::string>& subdirs, WarmCounts& counts,
            std::atomic<uint64_t>& entries) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int e = errno;
    ::close(fd);
    return e;
  }
  for (;;) {
    // readdir reports an error only through errno, which fstatat below may
    // have set: clear it before every call, not once.
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
      }
    }
    if (type == DT_DIR) {
      subdirs.push_back(dir + "/" + e->d_name);
    } else if (type == DT_REG) {
      ++counts.files;
    } else {
      ++counts.other;
    }
    entries.fetch_add(1, std::memory_order_relaxed);
  }
  const int err = errno;
  ::closedir(d);
  return err;
}

}  // namespace

Result<WarmCounts> TreeWarmer::Walk(const std::string& root) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0)
    return MakeError(errno, "Warm", root + ": " + strerror(errno));
  if (!S_ISDIR(st.st_mode)) return MakeError(ENOTDIR, "Warm", root + ": not a directory");
  entries_ = 0;
  WalkState state;
  {
    MutexLock lock(state.mu);
    state.queue.push_back(root);
  }
  auto work = [&] {
    WarmCounts mine;
    std::vector<std::string> subdirs;
    MutexLock lock(state.mu);
    for (;;) {
      while (state.queue.empty() && state.busy != 0) state.cv.Wait(state.mu);
      if (state.queue.empty()) break;  // nothing queued and nobody reading: done
      std::string dir = std::move(state.queue.front());
      state.queue.pop_front();
      ++state.busy;
      lock.Unlock();
      subdirs.clear();
      const int err = ReadOne(dir, subdirs, mine, entries_);
      lock.Lock();
      --state.busy;
      ++state.counts.dirs;
      if (err != 0 && state.counts.errors++ == 0) {
        state.counts.first_error = dir + ": " + strerror(err);
      }
      for (auto& s : subdirs) state.queue.push_back(std::move(s));
      state.cv.NotifyAll();
    }
    state.counts.files += mine.files;
    state.counts.other += mine.other;
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < threads_; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  MutexLock lock(state.mu);
  return state.counts;
}

}  // namespace bucketfs::tools
