// InodeTable: the map between FUSE inode numbers and S3 names.
//
// Each inode is a (parent, name) entry with the bucket and full key it stands
// for: a file's key is the object key, a directory's key is its prefix ending
// in "/" (or "" for a bucket's root). Inode numbers are never reused during a
// mount.
//
// Invariant (the kernel's contract): an inode's lookup count is the number of
// replies that handed it to the kernel (lookup, create, mkdir, readdirplus
// entries) minus what forget/forget_multi returned. Every reply that creates an
// entry increments it (Acquire*), every forget decrements it (Forget); a
// decrement below zero is a bug and aborts. An inode whose count reaches zero
// is erased, so a long-running mount does not leak. The root (inode 1) is
// never erased.
//
// Unlinking or renaming only changes the (parent, name) -> inode index; the
// inode itself lives until the kernel forgets it.
//
// Thread-safe: one mutex guards all fields; no call blocks on I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "handover/session_journal.h"

namespace bucketfs::fs {

using Ino = uint64_t;
inline constexpr Ino kRootIno = 1;

enum class Kind { kFile, kDir };

// What an object stands for in the mount (fuse/object_type.h: s3fs's
// x-amz-meta-mode). Only HeadObject returns user metadata, so an object known
// from a listing is kUnknown when its size allows a link's body. kSpecial is a
// FIFO, socket or device node: an empty body whose mode says its type.
enum class ObjectType : uint8_t { kRegular, kLink, kUnknown, kSpecial };

// What S3 said about an object, kept with its inode.
struct ObjectAttrs {
  uint64_t size = 0;
  std::chrono::system_clock::time_point mtime{};
  std::string etag;
  std::chrono::steady_clock::time_point fetched{};  // when S3 said it
  ObjectType type = ObjectType::kRegular;
  std::string link_target;  // a link's body, once this mount wrote or read it
  // Owner, permissions and time from user metadata (--preserve-attrs; s3fs's
  // names): set only when a HEAD (or this mount's own change) said them.
  std::optional<uint32_t> mode, uid, gid;
  std::optional<std::chrono::system_clock::time_point> meta_mtime;
  uint64_t rdev = 0;            // a device node's number (x-amz-meta-rdev)
  bool metadata_known = false;  // read from a HEAD or written here: not a listing's
};

// `fresh` with what `known` says of the same object version (same ETag) and
// `fresh` lacks: its type and link target (a listing does not carry them; an
// empty listed object is a regular file unless a HEAD or this mount said it
// is a special file); and `known`'s mtime, so that one version's time never
// changes under the kernel.
ObjectAttrs MergeKnown(const ObjectAttrs& known, ObjectAttrs fresh);

// True when `held` was learned after the request that brought `answer` was
// sent (`fetched` is the sending time of S3's answers and the completion
// time of this mount's own changes): an answer that was on its way while this
// mount wrote the object must not replace what the write left. Attributes
// without a time (reset to "ask again") always apply.
inline bool LearnedSince(const ObjectAttrs& held, const ObjectAttrs& answer) {
  return answer.fetched != std::chrono::steady_clock::time_point{} && held.fetched > answer.fetched;
}

// True when S3 said `a` less than `ttl` seconds ago (never when it did not).
inline bool FreshWithin(const ObjectAttrs& a, double ttl) {
  return a.fetched != std::chrono::steady_clock::time_point{} &&
         std::chrono::steady_clock::now() - a.fetched < std::chrono::duration<double>(ttl);
}

// A copy of one inode's state, safe to use without the table's lock.
struct InodeSnapshot {
  Ino ino = 0;
  Ino parent = 0;
  std::string name;
  Kind kind = Kind::kDir;
  std::string bucket;
  std::string key;  // file: object key; dir: prefix ending in "/" or ""
  ObjectAttrs attrs;
  std::string last_open_etag;  // ETag seen by the previous open (keep_cache)
  uint64_t lookups = 0;
};

class InodeTable {
 public:
  // The root stands for `bucket` / `root_key` (all-buckets mode: both empty).
  InodeTable(std::string bucket, std::string root_key);

  // Returns the inode for (parent, name), creating it when absent or when the
  // existing one has another kind (a file replaced by a directory: the old
  // inode is unlinked from the name and lives until forgotten). Increments its
  // lookup count by one. Updates attrs when given, unless the inode's were
  // learned later (LearnedSince).
  // REQUIRES: parent is known (not forgotten).
  Ino Acquire(Ino parent, const std::string& name, Kind kind, const std::string& bucket,
              const std::string& key, const std::optional<ObjectAttrs>& attrs);

  // Decrements the lookup count by n; aborts on underflow; erases at zero.
  void Forget(Ino ino, uint64_t n);

  std::optional<InodeSnapshot> Get(Ino ino) const;
  // The inode currently linked at (parent, name), if any.
  std::optional<Ino> Find(Ino parent, const std::string& name) const;

  // Sets a file's attrs unless its own were learned later (LearnedSince).
  void SetAttrs(Ino ino, const ObjectAttrs& attrs);
  // Records the ETag of this open; returns the one recorded by the previous.
  std::string ExchangeOpenEtag(Ino ino, const std::string& etag);

  // Removes the (parent, name) link if it points to `ino` (unlink, rmdir).
  void Unlink(Ino parent, const std::string& name);

  // Moves the link of (parent, name) to (new_parent, new_name), dropping any
  // inode linked there, and sets the inode's bucket and key. For a
  // directory, every known inode under the old prefix moves with it.
  void Rename(Ino parent, const std::string& name, Ino new_parent, const std::string& new_name,
              const std::string& new_bucket, const std::string& new_key);

  // Number of inodes held, root included (tests check for leaks).
  size_t size() const;

  // Every inode created, moved or erased from now on is written to `journal`
  // (may be null: none), so that a restarted daemon can restore the table.
  void SetJournal(handover::SessionJournal* journal);
  // Takes back the inodes a previous daemon of this mount handed out (its
  // journal). Their lookup counts are unknown: each counts only the lookups
  // made from now on, and the kernel's forget of it (which carries the
  // kernel's whole count when it evicts an inode) erases it. Numbers
  // continue after the highest restored one. REQUIRES: a new table.
  void Restore(const std::map<uint64_t, handover::NodeRecord>& nodes);

 private:
  struct Inode {
    Ino parent = 0;
    std::string name;
    Kind kind = Kind::kDir;
    std::string bucket;
    std::string key;
    ObjectAttrs attrs;
    std::string last_open_etag;
    uint64_t lookups = 0;
    bool linked = true;     // (parent, name) in children_ points here
    bool restored = false;  // handed out by a previous daemon: count unknown
  };
  static InodeSnapshot Snapshot(Ino ino, const Inode& in);
  void Journal(Ino ino, const Inode& in) REQUIRES(mu_);

  mutable Mutex mu_;
  Ino next_ino_ GUARDED_BY(mu_) = kRootIno + 1;
  std::unordered_map<Ino, Inode> inodes_ GUARDED_BY(mu_);
  std::map<std::pair<Ino, std::string>, Ino> children_ GUARDED_BY(mu_);
  handover::SessionJournal* journal_ GUARDED_BY(mu_) = nullptr;
  bool restored_any_ GUARDED_BY(mu_) = false;
};

}  // namespace bucketfs::fs
