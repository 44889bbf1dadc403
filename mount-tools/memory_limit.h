// The memory a mount may plan with: the machine's RAM, or the memory limit
// of the cgroup the daemon runs in when that is lower (a systemd unit's
// MemoryMax=, a container's limit), so that default budgets sized from it
// do not get the daemon killed by the cgroup's OOM killer.
//
// cgroup v2: the `0::PATH` line of /proc/self/cgroup, then `memory.max` of
// PATH and of each ancestor below /sys/fs/cgroup ("max" = no limit; the
// lowest counts). cgroup v1: the `memory` controller's line and
// `memory.limit_in_bytes` below /sys/fs/cgroup/memory (values near 2^63
// mean no limit). Every path is read below `root`, so tests pass a fake tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bucketfs::tools {

// The lowest memory limit of the process's cgroup and its ancestors, or
// nullopt when none is set or the files cannot be read.
std::optional<uint64_t> CgroupMemoryLimit(const std::string& root = "/");

struct AvailableMemory {
  uint64_t bytes = 0;
  bool from_cgroup = false;  // the cgroup's limit, lower than RAM
};
// min(RAM, the cgroup limit under `root`); `ram_bytes` 0 = unknown.
AvailableMemory AvailableMemoryFor(uint64_t ram_bytes, const std::string& root = "/");
// This machine's RAM (sysconf), 0 when unknown.
uint64_t PhysicalMemoryBytes();

// "2 GiB", "1.5 GiB", "256 MiB": for log lines.
std::string ShowMemory(uint64_t bytes);

// The read-ahead budget the mount uses when --max-memory is not given, and
// the log line that says why: "read-ahead memory budget 2 GiB: 25% of
// cgroup limit 8 GiB".
struct DefaultReadBudget {
  uint64_t bytes = 0;
  std::string explanation;
};
DefaultReadBudget ChooseDefaultReadBudget(const AvailableMemory& memory);

}  // namespace bucketfs::tools
