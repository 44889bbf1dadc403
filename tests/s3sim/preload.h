// Preloaded data sets: N objects of S pseudo-random bytes under a prefix, so
// benchmarks need no upload step. Contents are a pure function of (seed,
// bucket, key, offset) — word i of an object is splitmix64's i-th output for a
// per-object seed — so any byte can be recomputed by a test and generation is
// split across threads.
#ifndef TESTS_S3SIM_PRELOAD_H_
#define TESTS_S3SIM_PRELOAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "tests/s3sim/store.h"

namespace s3sim {

struct PreloadSpec {
  std::string bucket;
  std::string prefix;
  uint64_t count = 0;
  uint64_t size = 0;
};

// Parses "BUCKET/PREFIX:COUNT:SIZE" (SIZE takes K/M/G/T binary suffixes).
std::optional<PreloadSpec> ParsePreloadSpec(const std::string& spec);

// Parses "123", "64K", "8M", "1G", "1GiB" (binary multiples).
std::optional<uint64_t> ParseSize(std::string_view s);

// Key of object i: PREFIX + "obj-" + five-digit index.
std::string PreloadKey(const PreloadSpec& spec, uint64_t index);

// Fills out[0, size) with the deterministic contents for (seed, bucket, key).
void FillPreloadBytes(uint64_t seed, const std::string& bucket, const std::string& key, char* out,
                      uint64_t size, int threads);

// Creates the bucket if needed and stores the objects. Returns an error message.
std::optional<std::string> Preload(Store& store, const PreloadSpec& spec, uint64_t seed,
                                   int threads);

}  // namespace s3sim

#endif  // TESTS_S3SIM_PRELOAD_H_
