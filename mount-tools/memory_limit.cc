#include "mount-tools/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

#include "memory/memory_budget.h"

namespace bucketfs::tools {
namespace {

// cgroup v1 reports "no limit" as the largest page-aligned signed 64-bit value.
constexpr uint64_t kV1Unlimited = 1ull << 60;

std::optional<std::string> ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<uint64_t> ParseLimit(const std::string& text) {
  if (text == "max") return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v >= kV1Unlimited) {
    return std::nullopt;
  }
  return v;
}

std::string Join(const std::string& root, std::string_view path) {
  std::string out = root;
  while (!out.empty() && out.back() == '/') out.pop_back();
  if (path.empty() || path[0] != '/') out += '/';
  out += path;
  return out;
}

// The lowest `file` limit in `base`+`cgroup` and its ancestors up to `base`.
std::optional<uint64_t> LowestLimit(const std::string& base, std::string cgroup,
                                    const std::string& file) {
  std::optional<uint64_t> lowest;
  for (;;) {
    while (cgroup.size() > 1 && cgroup.back() == '/') cgroup.pop_back();
    if (auto text = ReadFirstLine(Join(base, cgroup == "/" ? file : cgroup + "/" + file))) {
      if (auto v = ParseLimit(*text); v && (!lowest || *v < *lowest)) lowest = v;
    }
    if (cgroup.empty() || cgroup == "/") break;
    const size_t slash = cgroup.rfind('/');
    cgroup = slash == 0 || slash == std::string::npos ? "/" : cgroup.substr(0, slash);
  }
  return lowest;
}

}  // namespace

std::optional<uint64_t> CgroupMemoryLimit(const std::string& root) {
  std::ifstream in(Join(root, "/proc/self/cgroup"));
  std::string line;
  std::optional<uint64_t> lowest;
  auto take = [&](std::optional<uint64_t> v) {
    if (v && (!lowest || *v < *lowest)) lowest = v;
  };
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH"; the path may itself contain ':'.
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      take(LowestLimit(Join(root, "/sys/fs/cgroup"), path, "memory.max"));
      continue;
    }
    std::stringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name == "memory") {
        take(LowestLimit(Join(root, "/sys/fs/cgroup/memory"), path, "memory.limit_in_bytes"));
      }
    }
  }
  return lowest;
}

AvailableMemory AvailableMemoryFor(uint64_t ram_bytes, const std::string& root) {
  AvailableMemory m{.bytes = ram_bytes, .from_cgroup = false};
  if (auto limit = CgroupMemoryLimit(root); limit && (ram_bytes == 0 || *limit < ram_bytes)) {
    m = {.bytes = *limit, .from_cgroup = true};
  }
  return m;
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

std::string ShowMemory(uint64_t bytes) {
  constexpr uint64_t kGiB = 1ull << 30;
  constexpr uint64_t kMiB = 1ull << 20;
  char buf[32];
  if (bytes >= kGiB) {
    const double g = static_cast<double>(bytes) / static_cast<double>(kGiB);
    std::snprintf(buf, sizeof(buf), bytes % kGiB == 0 ? "%.0f GiB" : "%.1f GiB", g);
  } else if (bytes >= kMiB) {
    std::snprintf(buf, sizeof(buf), "%llu MiB", static_cast<unsigned long long>(bytes / kMiB));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

DefaultReadBudget ChooseDefaultReadBudget(const AvailableMemory& memory) {
  using memory::MemoryBudget;
  DefaultReadBudget out;
  if (memory.bytes == 0) {
    out.bytes = MemoryBudget::kMinDefaultBytes;
    out.explanation = "read-ahead memory budget " + ShowMemory(out.bytes) + ": memory size unknown";
    return out;
  }
  out.bytes = MemoryBudget::DefaultBudgetBytes(memory.bytes);
  const std::string of =
      std::string(memory.from_cgroup ? "cgroup limit " : "RAM ") + ShowMemory(memory.bytes);
  out.explanation = "read-ahead memory budget " + ShowMemory(out.bytes) + ": 25% of " + of;
  if (out.bytes == MemoryBudget::kMinDefaultBytes && memory.bytes / 4 < out.bytes) {
    out.explanation += ", raised to the minimum " + ShowMemory(out.bytes);
  } else if (out.bytes == MemoryBudget::kMaxDefaultBytes && memory.bytes / 4 > out.bytes) {
    out.explanation += ", capped at " + ShowMemory(out.bytes);
  }
  return out;
}

}  // namespace bucketfs::tools
