// StatWalkers: see stat_walkers.h.
#include "fuse/stat_walkers.h"

#include <algorithm>

namespace bucketfs::fs {

void StatWalkers::SawFileLookup(pid_t pid) {
  MutexLock lock(mu_);
  auto [it, added] = last_seen_.try_emplace(pid, 0);
  it->second = ++tick_;
  if (!added || last_seen_.size() <= kCapacity) return;
  // Full: forget the process seen longest ago (a scan of kCapacity entries,
  // only when a new process starts to stat).
  auto oldest = std::min_element(last_seen_.begin(), last_seen_.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
  last_seen_.erase(oldest);
}

bool StatWalkers::WantsAttrs(pid_t pid) const {
  MutexLock lock(mu_);
  return last_seen_.count(pid) != 0;
}

}  // namespace bucketfs::fs
