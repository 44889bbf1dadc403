// The bytes nullfs serves: a deterministic pattern computed once into one
// buffer, so a READ costs no generation at all (nullfs measures the FUSE
// path, not a data source).
//
// Byte `o` of file `f` is T[(o + f * kFileShift) mod kPeriod], where
// T[j] = (j * 131 ^ j >> 8 ^ j >> 16) & 0xff. The period is odd and not a
// multiple of any page or read size, so a READ answered with the wrong
// offset, page or file shows up as wrong bytes. The buffer holds
// kPeriod + max_read bytes: every READ is one contiguous slice of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nullfs {

inline constexpr uint64_t kPeriod = (1u << 20) + 4093;
inline constexpr uint64_t kFileShift = 7919;

class Pattern {
 public:
  // REQUIRES: max_read > 0 (the largest READ the kernel may send).
  explicit Pattern(size_t max_read);

  // The `size` bytes at `offset` of file `file`.
  // REQUIRES: size <= max_read
  const char* At(uint64_t file, uint64_t offset) const {
    return buf_.data() + (offset + file * kFileShift) % kPeriod;
  }

 private:
  std::vector<char> buf_;
};

}  // namespace nullfs
