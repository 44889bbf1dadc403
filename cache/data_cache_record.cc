// CacheRecord: see data_cache_record.h.
#include "cache/data_cache_record.h"

#include <algorithm>
#include <cstring>

namespace bucketfs::cache {
namespace {

constexpr uint8_t kRecordVersion = 1;

template <typename T>
void Put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

template <typename T>
bool Get(std::string_view& in, T& v) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(&v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}

}  // namespace

uint64_t CacheRecord::BlockEnd(uint64_t i) const {
  return std::min<uint64_t>((i + 1) * block_size, size);
}

uint64_t CacheRecord::PresentBytes() const {
  uint64_t n = 0;
  for (uint64_t i = 0; i < Blocks(); ++i) {
    if (present[i]) n += BlockEnd(i) - BlockBegin(i);
  }
  return n;
}

bool CacheRecord::Complete() const {
  return std::all_of(present.begin(), present.end(), [](uint8_t p) { return p != 0; });
}

bool CacheRecord::Covers(uint64_t offset, uint64_t len) const {
  if (len == 0 || offset + len > size || block_size == 0) return false;
  for (uint64_t i = offset / block_size; i <= (offset + len - 1) / block_size; ++i) {
    if (!present[i]) return false;
  }
  return true;
}

CacheRecord::BlockRange CacheRecord::BlocksInside(uint64_t offset, uint64_t end) const {
  if (block_size == 0) return {};
  const uint64_t first = (offset + block_size - 1) / block_size;
  // Every block ends at a multiple of block_size but the last, which ends at size.
  const uint64_t last = end >= size ? Blocks() : std::min<uint64_t>(end / block_size, Blocks());
  return {first, std::max(first, last)};
}

CacheRecord NewRecord(std::string file, uint64_t size, uint32_t block_size, int64_t now_ns) {
  CacheRecord r;
  r.file = std::move(file);
  r.size = size;
  r.block_size = block_size;
  r.used_ns = now_ns;
  const uint64_t blocks = (size + block_size - 1) / block_size;
  r.crc.assign(blocks, 0);
  r.present.assign(blocks, 0);
  return r;
}

std::string EncodeRecord(const CacheRecord& r) {
  std::string out;
  out.reserve(64 + r.file.size() + r.crc.size() * 5);
  Put<uint8_t>(out, kRecordVersion);
  Put<uint64_t>(out, r.size);
  Put<uint32_t>(out, r.block_size);
  Put<int64_t>(out, r.used_ns);
  Put<uint64_t>(out, r.verified.ino);
  Put<uint64_t>(out, r.verified.size);
  Put<int64_t>(out, r.verified.mtime_ns);
  Put<int64_t>(out, r.verified.ctime_ns);
  Put<uint32_t>(out, static_cast<uint32_t>(r.file.size()));
  out += r.file;
  for (uint32_t c : r.crc) Put<uint32_t>(out, c);
  out.append(reinterpret_cast<const char*>(r.present.data()), r.present.size());
  return out;
}

std::optional<CacheRecord> DecodeRecord(std::string_view v) {
  CacheRecord r;
  uint8_t version = 0;
  uint32_t name_len = 0;
  if (!Get(v, version) || version != kRecordVersion || !Get(v, r.size) || !Get(v, r.block_size) ||
      !Get(v, r.used_ns) || !Get(v, r.verified.ino) || !Get(v, r.verified.size) ||
      !Get(v, r.verified.mtime_ns) || !Get(v, r.verified.ctime_ns) || !Get(v, name_len) ||
      v.size() < name_len || r.block_size == 0) {
    return std::nullopt;
  }
  r.file = std::string(v.substr(0, name_len));
  v.remove_prefix(name_len);
  const uint64_t blocks = (r.size + r.block_size - 1) / r.block_size;
  if (v.size() != blocks * 5) return std::nullopt;
  r.crc.resize(blocks);
  for (auto& c : r.crc) Get(v, c);
  r.present.assign(v.begin(), v.end());
  if (r.file.empty() || r.file.find('/') != std::string::npos) return std::nullopt;
  return r;
}

}  // namespace bucketfs::cache
