// CRC32C (Castagnoli), the checksum S3 accepts as x-amz-checksum-crc32c.
// Computed with the SSE4.2 crc32 instruction when the CPU has it (about ten
// times faster than MD5, which matters when every uploaded byte is summed),
// else with a table. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace bucketfs::s3 {

// The CRC32C of `data`, continuing from `crc` (the value over the bytes
// before; 0 to start).
uint32_t Crc32c(std::span<const std::byte> data, uint32_t crc = 0);

// Copies `src` to `dst` and returns Crc32c(src, crc): one pass over the
// bytes, each summed while it is in a register on its way, stored with
// non-temporal stores (for a destination that is not read again soon: it
// ends up in memory, not in the cache). REQUIRES: dst.size() >= src.size();
// the two do not overlap.
uint32_t CopyCrc32c(std::span<std::byte> dst, std::span<const std::byte> src, uint32_t crc = 0);

// Base64 of the big-endian CRC32C of `data`: the x-amz-checksum-crc32c value.
std::string Crc32cBase64(std::span<const std::byte> data);
// The same value for a sum already computed (Crc32c over the whole body).
std::string Crc32cToBase64(uint32_t crc);

}  // namespace bucketfs::s3
