// CacheRecord: what the data cache's index (LMDB) holds for one object
// version: the name of its sparse file, the object's size, the block size,
// which blocks are present with the CRC32C of each, when it was last used
// (LRU), and the file identity seen when every block was last verified.
//
// A block is [i * block_size, min((i + 1) * block_size, size)): fixed blocks
// rather than arbitrary ranges, so a read checks only the blocks it touches,
// whatever the size of the fetch that filled them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bucketfs::cache {

// The file as fstat saw it when all its blocks were verified: any later write
// to it changes its ctime (which user space cannot set back).
struct FileStamp {
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

struct CacheRecord {
  std::string file;  // name under <dir>/objects
  uint64_t size = 0;
  uint32_t block_size = 0;
  int64_t used_ns = 0;           // wall clock of the last open that read it (LRU)
  FileStamp verified{};          // ino 0: not verified since last written
  std::vector<uint32_t> crc;     // per block
  std::vector<uint8_t> present;  // per block, 0 or 1

  uint64_t Blocks() const { return present.size(); }
  uint64_t BlockBegin(uint64_t i) const { return i * block_size; }
  uint64_t BlockEnd(uint64_t i) const;
  uint64_t PresentBytes() const;
  bool Complete() const;
  // True when every block overlapping [offset, offset + len) is present.
  bool Covers(uint64_t offset, uint64_t len) const;
  // The blocks wholly inside [offset, end), which a fill of those bytes can
  // write: indices first to last - 1 (none when first >= last).
  struct BlockRange {
    uint64_t first = 0;
    uint64_t last = 0;
  };
  BlockRange BlocksInside(uint64_t offset, uint64_t end) const;
};

// A record for a new, empty file of `size` bytes.
CacheRecord NewRecord(std::string file, uint64_t size, uint32_t block_size, int64_t now_ns);

std::string EncodeRecord(const CacheRecord& r);
// nullopt when `v` is not a whole, consistent record.
std::optional<CacheRecord> DecodeRecord(std::string_view v);

}  // namespace bucketfs::cache
