// StatWalkers: the processes that look at the attributes of files, so that
// READDIRPLUS carries attributes only to callers that use them.
//
// A READDIRPLUS entry with attributes makes the kernel (and this daemon)
// create an inode and a dentry per name. A stat walk (ls -l, du, os.walk +
// stat, rsync) profits: it needs no LOOKUP per file. A name walk (find,
// os.walk without stat, globbing) pays it for nothing: find over 100,000
// objects spends most of its time creating inodes it never uses. The kernel's
// own READDIRPLUS_AUTO sends READDIRPLUS for the first batch of every
// directory anyway, so for directories of a few hundred entries it is the
// same as always.
//
// So the daemon decides per caller: a process is a stat walker once it looked
// up a file by name (a walker that stats does so right after its first
// directory); until then its READDIRPLUS entries of files carry names only
// (node id 0, which the kernel takes as "no attributes": no inode, no lookup
// count). Directories always carry attributes: every walker enters them.
// Remembers the last kCapacity such processes (a reused pid only gets
// attributes it did not need).
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::fs {

class StatWalkers {
 public:
  static constexpr size_t kCapacity = 256;

  // `pid` looked up the name of a file.
  void SawFileLookup(pid_t pid);
  // True when `pid` looked up a file recently (among the last kCapacity).
  bool WantsAttrs(pid_t pid) const;

 private:
  mutable Mutex mu_;
  uint64_t tick_ GUARDED_BY(mu_) = 0;
  std::unordered_map<pid_t, uint64_t> last_seen_ GUARDED_BY(mu_);  // pid -> tick
};

}  // namespace bucketfs::fs
