// CRC32C: SSE4.2 when available, else a byte table (see crc32c.h).
#include "s3/crc32c.h"

#include <openssl/evp.h>

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace bucketfs::s3 {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected Castagnoli polynomial

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();

uint32_t TableCrc(const unsigned char* p, size_t n, uint32_t c) {
  for (size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareCrc(const unsigned char* p, size_t n,
                                                       uint32_t c) {
  uint64_t c64 = c;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
  }
  c = static_cast<uint32_t>(c64);
  for (; n > 0; ++p, --n) c = _mm_crc32_u8(c, *p);
  return c;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32c(std::span<const std::byte> data, uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  uint32_t c = ~crc;
#if defined(__x86_64__)
  if (HasSse42()) return ~HardwareCrc(p, data.size(), c);
#endif
  return ~TableCrc(p, data.size(), c);
}

std::string Crc32cBase64(std::span<const std::byte> data) {
  const uint32_t crc = Crc32c(data);
  const unsigned char be[4] = {
      static_cast<unsigned char>(crc >> 24), static_cast<unsigned char>(crc >> 16),
      static_cast<unsigned char>(crc >> 8), static_cast<unsigned char>(crc)};
  unsigned char b64[9];
  const int n = EVP_EncodeBlock(b64, be, 4);
  return std::string(reinterpret_cast<const char*>(b64), static_cast<size_t>(n));
}

}  // namespace bucketfs::s3
