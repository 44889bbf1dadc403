// DataWarmer: reads every regular file under a directory of a mounted bucket
// to its end (`bucketfs warm --data`), several files at once, so that the
// mount's data cache holds them before a job starts. Like TreeWarmer it only
// goes through the file system: the daemon fills its cache as it serves the
// reads, exactly as it would for the job. A rerun after an interruption reads
// what is already cached from local disk and fetches only the rest.
// Pages read are dropped from the page cache after each file
// (POSIX_FADV_DONTNEED): warming must not push the job's memory out.
// Thread-safe: one Run at a time per object.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "s3/result.h"

namespace bucketfs::tools {

struct DataWarmCounts {
  uint64_t files = 0;  // read to the end
  uint64_t bytes = 0;
  uint64_t errors = 0;
  std::string first_error;  // "PATH: strerror"
};

class DataWarmer {
 public:
  // REQUIRES: threads >= 1.
  explicit DataWarmer(int threads) : threads_(threads) {}

  // The regular files under `root`, sorted (directories first listed by the
  // metadata walk, so this costs no request with a warm metadata cache).
  static Result<std::vector<std::string>> ListFiles(const std::string& root);
  // Reads each file to its end; bytes() counts while it runs.
  DataWarmCounts Run(const std::vector<std::string>& files);
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  const int threads_;
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace bucketfs::tools
