// TreeWarmer: walks a directory tree of a mounted bucket with many
// directories in flight, so that the mount lists every directory once and
// its metadata cache holds the whole tree before a job starts
// (`bucketfs warm`). It only reads directories through the file system: the
// daemon fills its cache as it answers, exactly as it would for the job.
//
// A fixed set of threads shares a queue of directories; each thread opens
// one directory, reads it to the end, queues its subdirectories and counts
// the rest. The walk ends when the queue is empty and no thread holds a
// directory. Symbolic links are not followed (the mount has none). An entry
// whose type readdir does not say is asked with fstatat.
// Thread-safe: one Walk at a time per object.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "s3/result.h"

namespace bucketfs::tools {

struct WarmCounts {
  uint64_t dirs = 0;        // directories read, the root included
  uint64_t files = 0;       // regular files listed
  uint64_t other = 0;       // anything else listed
  uint64_t errors = 0;      // directories that could not be read
  std::string first_error;  // "PATH: strerror" of the first of them
};

class TreeWarmer {
 public:
  // REQUIRES: threads >= 1.
  explicit TreeWarmer(int threads) : threads_(threads) {}

  // Walks `root` (a directory). Entries seen so far are counted in
  // `entries()` while the walk runs (for a progress bar). Fails only when
  // `root` itself cannot be opened.
  Result<WarmCounts> Walk(const std::string& root);
  uint64_t entries() const { return entries_.load(std::memory_order_relaxed); }

 private:
  const int threads_;
  std::atomic<uint64_t> entries_{0};
};

}  // namespace bucketfs::tools
