// nullfs: the FUSE ceiling of this machine. A libfuse3 low-level filesystem
// with bucketfs's FUSE settings (INIT capabilities, max_read/max_write 1 MiB,
// max_background 64, 16 MiB readahead, direct I/O for write handles) and no
// data source at all: reads are answered from a precomputed pattern
// (pattern.h), writes are counted and dropped. What a benchmark gets through
// it is what any FUSE daemon could get here; bucketfs / nullfs says how much
// of the platform bucketfs uses (fio-jobs/README.md).
//
// Layout: /seq/file-0 .. file-(N-1), read-only, `size` bytes each (the fio
// read jobs' files); /write/, where files can be created, written (the data
// is discarded, the size is kept), truncated and unlinked. Reading a written
// file fails with EIO: its bytes are gone.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "tests/nullfs/pattern.h"

namespace nullfs {

struct Config {
  uint64_t files = 8;
  uint64_t size = 1ull << 30;
  bool direct_io = false;   // FOPEN_DIRECT_IO on read handles too
  bool keep_cache = false;  // FOPEN_KEEP_CACHE on read handles
};

// Inode numbers: fixed for the directories and the pattern files, counted up
// from kFirstWritten for created files.
inline constexpr fuse_ino_t kRootIno = 1;
inline constexpr fuse_ino_t kSeqIno = 2;
inline constexpr fuse_ino_t kWriteIno = 3;
inline constexpr fuse_ino_t kFirstFile = 16;
inline constexpr fuse_ino_t kFirstWritten = 1ull << 40;

// The session's userdata.
class NullFs {
 public:
  NullFs(const Config& config, size_t max_read) : config_(config), pattern_(max_read) {}

  const Config& config() const { return config_; }
  const Pattern& pattern() const { return pattern_; }

  // Created files: name -> (ino, size).
  struct Written {
    fuse_ino_t ino;
    uint64_t size;
  };
  bucketfs::Mutex mu;
  std::map<std::string, Written> written GUARDED_BY(mu);
  fuse_ino_t next_ino GUARDED_BY(mu) = kFirstWritten;

 private:
  const Config config_;
  const Pattern pattern_;
};

// The operations table (userdata: NullFs*).
const fuse_lowlevel_ops& Operations();

}  // namespace nullfs
