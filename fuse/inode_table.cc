#include "fuse/inode_table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace bucketfs::fs {

InodeTable::InodeTable(std::string bucket, std::string root_key) {
  Inode root;
  root.parent = kRootIno;
  root.kind = Kind::kDir;
  root.bucket = std::move(bucket);
  root.key = std::move(root_key);
  root.lookups = 1;  // the kernel never forgets the root
  root.linked = false;
  inodes_.emplace(kRootIno, std::move(root));
}

InodeSnapshot InodeTable::Snapshot(Ino ino, const Inode& in) {
  InodeSnapshot s;
  s.ino = ino;
  s.parent = in.parent;
  s.name = in.name;
  s.kind = in.kind;
  s.bucket = in.bucket;
  s.key = in.key;
  s.attrs = in.attrs;
  s.last_open_etag = in.last_open_etag;
  s.lookups = in.lookups;
  return s;
}

ObjectAttrs MergeKnown(const ObjectAttrs& known, ObjectAttrs fresh) {
  if (fresh.etag.empty() || fresh.etag != known.etag) return fresh;
  // The same version keeps the time the kernel was given: a changed mtime
  // makes the kernel drop the file's page cache, and the time of one version
  // differs by source (this mount's commit time, then the store's
  // LastModified in whole seconds; a listing's milliseconds, then a HEAD's
  // seconds).
  if (known.mtime != std::chrono::system_clock::time_point{}) fresh.mtime = known.mtime;
  if (fresh.type == ObjectType::kUnknown || known.type == ObjectType::kSpecial) {
    fresh.type = known.type;
    fresh.rdev = known.rdev;
  }
  if (fresh.link_target.empty()) fresh.link_target = known.link_target;
  if (!fresh.metadata_known && known.metadata_known) {
    fresh.mode = known.mode;
    fresh.uid = known.uid;
    fresh.gid = known.gid;
    fresh.meta_mtime = known.meta_mtime;
    fresh.metadata_known = true;
  }
  return fresh;
}

namespace {

// The kernel cannot change an inode's file type: a name that turned from a
// link into a file (or back) needs a new inode.
bool TypeChanged(const ObjectAttrs& old, const ObjectAttrs& now) {
  if (old.type == ObjectType::kUnknown || now.type == ObjectType::kUnknown) return false;
  return (old.type == ObjectType::kLink) != (now.type == ObjectType::kLink);
}

}  // namespace

Ino InodeTable::Acquire(Ino parent, const std::string& name, Kind kind, const std::string& bucket,
                        const std::string& key, const std::optional<ObjectAttrs>& attrs) {
  MutexLock lock(mu_);
  auto link = children_.find({parent, name});
  if (link != children_.end()) {
    Inode& existing = inodes_.at(link->second);
    const bool newer = attrs && !LearnedSince(existing.attrs, *attrs);
    const ObjectAttrs merged = newer ? MergeKnown(existing.attrs, *attrs) : existing.attrs;
    if (existing.kind == kind && existing.key == key && existing.bucket == bucket &&
        !TypeChanged(existing.attrs, merged)) {
      ++existing.lookups;
      existing.attrs = merged;
      return link->second;
    }
    // The name now stands for something else: detach the old inode.
    existing.linked = false;
    children_.erase(link);
  }
  Ino ino = next_ino_++;
  Inode in;
  in.parent = parent;
  in.name = name;
  in.kind = kind;
  in.bucket = bucket;
  in.key = key;
  if (attrs) in.attrs = *attrs;
  in.lookups = 1;
  Journal(ino, in);
  inodes_.emplace(ino, std::move(in));
  children_.emplace(std::make_pair(parent, name), ino);
  return ino;
}

void InodeTable::Journal(Ino ino, const Inode& in) {
  if (journal_ != nullptr) {
    journal_->NodeChanged({ino, in.parent, in.kind == Kind::kDir, in.name, in.bucket, in.key});
  }
}

void InodeTable::SetJournal(handover::SessionJournal* journal) {
  MutexLock lock(mu_);
  journal_ = journal;
}

void InodeTable::Restore(const std::map<uint64_t, handover::NodeRecord>& nodes) {
  MutexLock lock(mu_);
  for (const auto& [ino, node] : nodes) {
    if (ino == kRootIno) continue;
    Inode in;
    in.parent = node.parent;
    in.name = node.name;
    in.kind = node.dir ? Kind::kDir : Kind::kFile;
    in.bucket = node.bucket;
    in.key = node.key;
    in.restored = true;
    restored_any_ = true;
    in.linked = children_.emplace(std::make_pair(node.parent, node.name), ino).second;
    inodes_[ino] = std::move(in);
    next_ino_ = std::max(next_ino_, ino + 1);
  }
}

void InodeTable::Forget(Ino ino, uint64_t n) {
  MutexLock lock(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end() && restored_any_) return;  // lost with a record a crash cut
  if (it == inodes_.end()) {
    std::fprintf(stderr, "bucketfs: forget of unknown inode %llu\n",
                 static_cast<unsigned long long>(ino));
    std::abort();
  }
  Inode& in = it->second;
  if (in.restored) {
    // The kernel forgets an inode whole: its count includes the lookups the
    // previous daemon answered, which this table never saw.
    in.lookups = n >= in.lookups ? 0 : in.lookups - n;
  } else if (in.lookups < n) {
    std::fprintf(stderr, "bucketfs: lookup count underflow on inode %llu (%llu - %llu)\n",
                 static_cast<unsigned long long>(ino), static_cast<unsigned long long>(in.lookups),
                 static_cast<unsigned long long>(n));
    std::abort();
  } else {
    in.lookups -= n;
  }
  if (in.lookups > 0 || ino == kRootIno) return;
  if (in.linked) {
    auto link = children_.find({in.parent, in.name});
    if (link != children_.end() && link->second == ino) children_.erase(link);
  }
  inodes_.erase(it);
  if (journal_ != nullptr) journal_->NodeDropped(ino);
}

std::optional<InodeSnapshot> InodeTable::Get(Ino ino) const {
  MutexLock lock(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return std::nullopt;
  return Snapshot(ino, it->second);
}

std::optional<Ino> InodeTable::Find(Ino parent, const std::string& name) const {
  MutexLock lock(mu_);
  auto it = children_.find({parent, name});
  if (it == children_.end()) return std::nullopt;
  return it->second;
}

void InodeTable::SetAttrs(Ino ino, const ObjectAttrs& attrs) {
  MutexLock lock(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return;
  if (it->second.kind == Kind::kFile && LearnedSince(it->second.attrs, attrs)) return;
  it->second.attrs = MergeKnown(it->second.attrs, attrs);
}

std::string InodeTable::ExchangeOpenEtag(Ino ino, const std::string& etag) {
  MutexLock lock(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return {};
  std::string previous = std::move(it->second.last_open_etag);
  it->second.last_open_etag = etag;
  return previous;
}

void InodeTable::Unlink(Ino parent, const std::string& name) {
  MutexLock lock(mu_);
  auto link = children_.find({parent, name});
  if (link == children_.end()) return;
  inodes_.at(link->second).linked = false;
  children_.erase(link);
}

void InodeTable::Rename(Ino parent, const std::string& name, Ino new_parent,
                        const std::string& new_name, const std::string& new_bucket,
                        const std::string& new_key) {
  MutexLock lock(mu_);
  auto link = children_.find({parent, name});
  if (link == children_.end()) return;
  Ino ino = link->second;
  children_.erase(link);
  auto target = children_.find({new_parent, new_name});
  if (target != children_.end()) {
    inodes_.at(target->second).linked = false;
    children_.erase(target);
  }
  Inode& in = inodes_.at(ino);
  const std::string old_key = in.key;
  const std::string old_bucket = in.bucket;
  in.bucket = new_bucket;
  in.parent = new_parent;
  in.name = new_name;
  in.key = new_key;
  children_.emplace(std::make_pair(new_parent, new_name), ino);
  Journal(ino, in);
  if (in.kind != Kind::kDir || old_key.empty()) return;
  // Descendants carry full keys: rewrite the moved prefix.
  for (auto& [other_ino, other] : inodes_) {
    if (other_ino == ino || other.bucket != old_bucket) continue;
    if (other.key.compare(0, old_key.size(), old_key) == 0) {
      other.key = new_key + other.key.substr(old_key.size());
      other.bucket = new_bucket;
      Journal(other_ino, other);
    }
  }
}

size_t InodeTable::size() const {
  MutexLock lock(mu_);
  return inodes_.size();
}

}  // namespace bucketfs::fs
