// PartLayout: where multipart part boundaries fall in a file, for parts sized
// by PartSizeFor (the first 1000 parts `base` bytes, then doubling every 1000
// parts). Indexes are 0-based (part number = index + 1). Pure arithmetic.
#pragma once

#include <cstdint>

namespace bucketfs::upload {

// Part size for part `part_number` (1-based): `base` for the first 1000
// parts, then doubling every 1000 parts (capped at s3::kMaxPartSize), so
// s3::kMaxPartNumber parts reach far past s3::kMaxObjectSize.
uint64_t PartSizeFor(uint64_t base, int part_number);

class PartLayout {
 public:
  static constexpr int kPartsPerGroup = 1000;

  explicit PartLayout(uint64_t base) : base_(base == 0 ? 1 : base) {}

  uint64_t SizeOf(int i) const { return PartSizeFor(base_, i + 1); }
  uint64_t Start(int i) const {
    uint64_t start = 0;
    int g = 0;
    for (; (g + 1) * kPartsPerGroup <= i; ++g) start += GroupBytes(g);
    return start + static_cast<uint64_t>(i - g * kPartsPerGroup) * SizeOf(g * kPartsPerGroup);
  }
  uint64_t End(int i) const { return Start(i) + SizeOf(i); }
  // The part holding byte `offset`.
  int IndexOf(uint64_t offset) const {
    int g = 0;
    while (offset >= GroupBytes(g)) {
      offset -= GroupBytes(g);
      ++g;
    }
    return g * kPartsPerGroup + static_cast<int>(offset / SizeOf(g * kPartsPerGroup));
  }
  // Parts in a file of `size` bytes.
  int Count(uint64_t size) const { return size == 0 ? 0 : IndexOf(size - 1) + 1; }

 private:
  uint64_t GroupBytes(int g) const { return kPartsPerGroup * SizeOf(g * kPartsPerGroup); }
  const uint64_t base_;
};

}  // namespace bucketfs::upload
