#include "tests/s3sim/crc32c.h"

#include <array>

#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

// Slicing-by-8 tables: s3sim sums every uploaded byte, and the bitwise form
// (one table) runs at ~0.4 GB/s, which would show in benchmarks.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

const Tables& T() {
  static const Tables tables = MakeTables();
  return tables;
}

}  // namespace

uint32_t Crc32c(std::string_view data) {
  const Tables& t = T();
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint32_t c = 0xFFFFFFFFu;
  while (n >= 8) {
    // Little-endian byte order of the first four bytes, as the reflected CRC needs.
    uint32_t lo =
        c ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
        t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return c ^ 0xFFFFFFFFu;
}

std::string Crc32cBase64(std::string_view data) {
  const uint32_t c = Crc32c(data);
  const char be[4] = {static_cast<char>(c >> 24), static_cast<char>(c >> 16),
                      static_cast<char>(c >> 8), static_cast<char>(c)};
  return Base64(std::string_view(be, 4));
}

}  // namespace s3sim
