#include "fuse/read_order.h"

#include <algorithm>

namespace bucketfs::fs {

std::string ReadOrder::KeyOf(const std::string& bucket, const std::string& key) {
  std::string k;
  k.reserve(bucket.size() + key.size() + 1);
  k.append(bucket).push_back('\0');
  k.append(key);
  return k;
}

void ReadOrder::Reset() {
  std::vector<Slot> slots;  // freed outside the lock
  std::unordered_map<std::string, std::vector<size_t>> index;
  MutexLock lock(mu_);
  slots.swap(slots_);
  index.swap(index_);
  cursor_ = 0;
  opened_ = 0;
  resolved_ = 0;
  ++generation_;
}

size_t ReadOrder::Add(std::vector<Target> targets) {
  MutexLock lock(mu_);
  const size_t room = kMaxFiles - std::min(kMaxFiles, slots_.size());
  const size_t taken = std::min(room, targets.size());
  for (size_t i = 0; i < taken; ++i) {
    index_[KeyOf(targets[i].bucket, targets[i].key)].push_back(slots_.size());
    slots_.push_back(Slot{std::move(targets[i]), State::kUnresolved, false, {}});
  }
  return taken;
}

size_t ReadOrder::Behind() const { return cursor_ > window_ ? cursor_ - window_ : 0; }

bool ReadOrder::Opened(const std::string& bucket, const std::string& key) {
  MutexLock lock(mu_);
  auto it = index_.find(KeyOf(bucket, key));
  if (it == index_.end()) return false;
  // The first announcement of this file not yet opened and not given up.
  const size_t from = Behind();
  for (size_t pos : it->second) {
    if (pos < from || slots_[pos].opened) continue;
    slots_[pos].opened = true;
    ++opened_;
    cursor_ = std::max(cursor_, pos + 1);
    return true;
  }
  return false;
}

ReadOrder::Unresolved ReadOrder::TakeUnresolved() {
  Unresolved out;
  MutexLock lock(mu_);
  out.generation = generation_;
  const size_t end = std::min(slots_.size(), cursor_ + window_);
  for (size_t pos = cursor_; pos < end; ++pos) {
    Slot& s = slots_[pos];
    if (s.state != State::kUnresolved || s.opened) continue;
    s.state = State::kResolving;
    out.positions.emplace_back(pos, s.target);
  }
  return out;
}

void ReadOrder::Resolved(size_t position, uint64_t generation,
                         std::optional<ObjectVersion> version) {
  MutexLock lock(mu_);
  if (generation != generation_ || position >= slots_.size()) return;
  Slot& s = slots_[position];
  if (version) {
    s.version = std::move(*version);
    s.state = State::kResolved;
    ++resolved_;
  } else {
    s.state = State::kNothing;
  }
}

std::vector<ObjectVersion> ReadOrder::Wanted() const {
  std::vector<ObjectVersion> out;
  MutexLock lock(mu_);
  const size_t end = std::min(slots_.size(), cursor_ + window_);
  for (size_t pos = Behind(); pos < end; ++pos) {
    const Slot& s = slots_[pos];
    if (s.state == State::kResolved && !s.opened) out.push_back(s.version);
  }
  return out;
}

ReadOrder::Stats ReadOrder::stats() const {
  MutexLock lock(mu_);
  return {slots_.size(), opened_, cursor_, resolved_};
}

}  // namespace bucketfs::fs
