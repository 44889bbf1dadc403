#include "tests/nullfs/pattern.h"

namespace nullfs {

Pattern::Pattern(size_t max_read) : buf_(kPeriod + max_read) {
  for (uint64_t i = 0; i < buf_.size(); ++i) {
    const uint64_t j = i % kPeriod;
    buf_[i] = static_cast<char>(((j * 131) ^ (j >> 8) ^ (j >> 16)) & 0xff);
  }
}

}  // namespace nullfs
