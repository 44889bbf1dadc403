// `bucketfs warm PATH [--data] [--threads N]`: walks a tree of a mounted
// bucket so that the mount's metadata cache (--cache) holds every listing
// before a job starts; with --metadata-ttl indefinite the job, and any later
// mount with the same cache, then sends no metadata request at all.
// Draws a progress bar (entries) and prints a final count.
//
// --data then reads every file under PATH to its end (data_warmer.h), so the
// mount's data cache (--cache) holds the bytes too: a progress bar in bytes
// and a final count; a rerun fetches only what is not cached yet.
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "mount-tools/commands.h"
#include "mount-tools/data_warmer.h"
#include "mount-tools/progress_bar.h"
#include "mount-tools/tree_warmer.h"

namespace bucketfs::tools {
namespace {

constexpr long kFuseSuperMagic = 0x65735546;

// Reads every file under `path` (--data); the exit status.
int WarmData(const std::string& path, int threads, bool no_progress) {
  auto files = DataWarmer::ListFiles(path);
  if (!files.ok()) {
    std::fprintf(stderr, "bucketfs warm: %s\n", files.error().message.c_str());
    return 1;
  }
  uint64_t total = 0;
  for (const auto& f : *files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_size);
  }
  DataWarmer warmer(std::min(threads, 8));  // files at once: a few streams fill the link
  const auto start = std::chrono::steady_clock::now();
  DataWarmCounts counts;
  {
    ProgressBar bar("warm data " + path, total, ProgressBar::ShouldShow(no_progress));
    std::atomic<bool> done{false};
    std::thread feed([&] {
      while (!done.load()) {
        const uint64_t now = warmer.bytes();
        if (now > bar.done()) bar.Add(now - bar.done());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
    counts = warmer.Run(*files);
    done = true;
    feed.join();
    bar.Finish();
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("read %s: %llu files, %llu bytes in %.2f s (%.1f MiB/s)\n", path.c_str(),
              static_cast<unsigned long long>(counts.files),
              static_cast<unsigned long long>(counts.bytes), secs,
              secs > 0 ? static_cast<double>(counts.bytes) / secs / (1 << 20) : 0.0);
  if (counts.errors > 0) {
    std::fprintf(stderr,
                 "bucketfs warm: %llu files could not be read (run again to resume); first: %s\n",
                 static_cast<unsigned long long>(counts.errors), counts.first_error.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int RunWarmCommand(int argc, char** argv) {
  CLI::App app("bucketfs warm: walk a tree of a mounted bucket into the metadata cache",
               "bucketfs warm");
  std::string path;
  bool data = false;
  int threads = 16;
  bool no_progress = false;
  app.add_option("path", path, "a directory inside a bucketfs mount")->required();
  app.add_flag("--data", data,
               "also read every file, so the mount's data cache (--cache) holds its bytes");
  app.add_option("--threads", threads, "directories read at once (default 16)")
      ->check(CLI::Range(1, 256));
  app.add_flag("--no-progress", no_progress, "no progress bar");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) {
    std::fprintf(stderr, "bucketfs warm: %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  if (fs.f_type != kFuseSuperMagic) {
    std::fprintf(stderr, "bucketfs warm: %s is not on a bucketfs (FUSE) mount\n", path.c_str());
    return 2;
  }

  TreeWarmer warmer(threads);
  const auto start = std::chrono::steady_clock::now();
  Result<WarmCounts> counts = MakeError(EINVAL, "Warm", "not run");
  {
    ProgressBar bar("warm " + path, 0, ProgressBar::ShouldShow(no_progress),
                    ProgressUnit::kEntries);
    std::atomic<bool> done{false};
    std::thread feed([&] {  // the bar polls the walker's counter
      while (!done.load()) {
        bar.Add(warmer.entries() - bar.done());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
    counts = warmer.Walk(path);
    done = true;
    feed.join();
    bar.Finish();
  }
  if (!counts.ok()) {
    std::fprintf(stderr, "bucketfs warm: %s\n", counts.error().message.c_str());
    return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t entries = counts->dirs - 1 + counts->files + counts->other;
  std::printf("warmed %s: %llu directories, %llu files, %llu entries in %.2f s (%.0f entries/s)\n",
              path.c_str(), static_cast<unsigned long long>(counts->dirs),
              static_cast<unsigned long long>(counts->files),
              static_cast<unsigned long long>(entries), secs,
              secs > 0 ? static_cast<double>(entries) / secs : 0.0);
  if (counts->errors > 0) {
    std::fprintf(stderr, "bucketfs warm: %llu directories could not be read; first: %s\n",
                 static_cast<unsigned long long>(counts->errors), counts->first_error.c_str());
    return 1;
  }
  return data ? WarmData(path, threads, no_progress) : 0;
}

}  // namespace bucketfs::tools
