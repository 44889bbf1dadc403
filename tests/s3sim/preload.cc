#include "tests/s3sim/preload.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t ObjectSeed(uint64_t seed, const std::string& bucket, const std::string& key) {
  std::string digest = Sha256(std::to_string(seed) + "\n" + bucket + "\n" + key);
  uint64_t s;
  std::memcpy(&s, digest.data(), sizeof s);
  return s;
}

// Words [first_word, first_word + n) of the stream, written little-endian.
void FillWords(uint64_t base, uint64_t first_word, uint64_t n, char* out) {
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t w = Mix(base + (first_word + i + 1) * kGamma);
    std::memcpy(out + i * 8, &w, 8);
  }
}

}  // namespace

std::optional<uint64_t> ParseSize(std::string_view s) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  auto n = ParseU64(s.substr(0, digits));
  if (!n) return std::nullopt;
  std::string suffix = ToLower(s.substr(digits));
  uint64_t mult = 1;
  if (suffix.empty() || suffix == "b") {
    mult = 1;
  } else if (suffix[0] == 'k') {
    mult = 1ULL << 10;
  } else if (suffix[0] == 'm') {
    mult = 1ULL << 20;
  } else if (suffix[0] == 'g') {
    mult = 1ULL << 30;
  } else if (suffix[0] == 't') {
    mult = 1ULL << 40;
  } else {
    return std::nullopt;
  }
  std::string rest = suffix.substr(suffix.empty() ? 0 : 1);
  if (!rest.empty() && rest != "i" && rest != "ib" && rest != "b") return std::nullopt;
  return *n * mult;
}

std::optional<PreloadSpec> ParsePreloadSpec(const std::string& spec) {
  size_t c2 = spec.rfind(':');
  if (c2 == std::string::npos || c2 == 0) return std::nullopt;
  size_t c1 = spec.rfind(':', c2 - 1);
  if (c1 == std::string::npos) return std::nullopt;
  PreloadSpec out;
  std::string path = spec.substr(0, c1);
  size_t slash = path.find('/');
  out.bucket = path.substr(0, slash);
  if (slash != std::string::npos) out.prefix = path.substr(slash + 1);
  auto count = ParseU64(std::string_view(spec).substr(c1 + 1, c2 - c1 - 1));
  auto size = ParseSize(std::string_view(spec).substr(c2 + 1));
  if (out.bucket.empty() || !count || !size) return std::nullopt;
  out.count = *count;
  out.size = *size;
  return out;
}

std::string PreloadKey(const PreloadSpec& spec, uint64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "obj-%05llu", static_cast<unsigned long long>(index));
  return spec.prefix + buf;
}

void FillPreloadBytes(uint64_t seed, const std::string& bucket, const std::string& key, char* out,
                      uint64_t size, int threads) {
  const uint64_t base = ObjectSeed(seed, bucket, key);
  const uint64_t words = size / 8;
  const uint64_t per =
      (words + static_cast<uint64_t>(threads) - 1) / static_cast<uint64_t>(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    uint64_t first = static_cast<uint64_t>(t) * per;
    if (first >= words) break;
    uint64_t n = std::min(per, words - first);
    workers.emplace_back([=] { FillWords(base, first, n, out + first * 8); });
  }
  for (auto& w : workers) w.join();
  if (size % 8 != 0) {
    char tail[8];
    FillWords(base, words, 1, tail);
    std::memcpy(out + words * 8, tail, size % 8);
  }
}

std::optional<std::string> Preload(Store& store, const PreloadSpec& spec, uint64_t seed,
                                   int threads) {
  store.CreateBucket(spec.bucket);
  std::vector<std::thread> workers;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  // Objects are spread over the threads; a single object gets all of them
  // for generation (MD5 is sequential per object).
  int outer = static_cast<int>(std::min<uint64_t>(spec.count, static_cast<uint64_t>(threads)));
  int inner = std::max(1, threads / std::max(1, outer));
  workers.reserve(static_cast<size_t>(outer));
  for (int t = 0; t < outer; ++t) {
    workers.emplace_back([&] {
      for (uint64_t i = next++; i < spec.count; i = next++) {
        std::string key = PreloadKey(spec, i);
        auto data = std::make_shared<std::string>();
        ResizeLargeBuffer(*data, spec.size);
        FillPreloadBytes(seed, spec.bucket, key, data->data(), spec.size, inner);
        auto obj = std::make_shared<Object>();
        obj->etag = SinglePartEtag(*data);
        obj->mtime = std::time(nullptr);
        obj->data = std::make_shared<const Body>(BufferPtr(std::move(data)));
        if (store.Put(spec.bucket, key, std::move(obj))) failed = true;
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failed) return "preload into " + spec.bucket + " failed";
  return std::nullopt;
}

}  // namespace s3sim
