#include "fuse/name_cache.h"

#include <algorithm>

namespace bucketfs::fs {

NameCache::NameCache(Options options, Clock clock)
    : options_(options),
      clock_(clock ? std::move(clock) : [] { return std::chrono::steady_clock::now(); }) {}

std::chrono::steady_clock::time_point NameCache::Now() const { return clock_(); }

std::chrono::steady_clock::time_point NameCache::Until(double seconds) const {
  return Now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(seconds));
}

std::string NameCache::DirId(const std::string& bucket, const std::string& dir_key) {
  std::string id;
  id.reserve(bucket.size() + 1 + dir_key.size());
  id.append(bucket).push_back('\0');  // no bucket name holds a NUL
  id.append(dir_key);
  return id;
}

NameCache::Dir& NameCache::Touch(const std::string& id) {
  auto [it, inserted] = dirs_.try_emplace(id);
  if (inserted) {
    lru_.push_front(id);
  } else {
    lru_.erase(it->second.lru);
    lru_.push_front(id);
  }
  it->second.lru = lru_.begin();
  return it->second;
}

void NameCache::Set(Dir& d, const std::string& name, Name n) {
  auto [it, inserted] = d.names.insert_or_assign(name, std::move(n));
  (void)it;
  if (inserted) ++total_;
}

void NameCache::Evict() {
  while (total_ > options_.max_names && lru_.size() > 1) {
    auto it = dirs_.find(lru_.back());
    total_ -= it->second.names.size();
    dirs_.erase(it);
    lru_.pop_back();
  }
}

std::optional<NameCache::Hit> NameCache::Find(const std::string& bucket, const std::string& dir_key,
                                              const std::string& name) {
  std::optional<Hit> hit = FindLocked(bucket, dir_key, name);
  (hit ? hits_ : misses_).fetch_add(1, std::memory_order_relaxed);
  return hit;
}

std::optional<NameCache::Hit> NameCache::FindLocked(const std::string& bucket,
                                                    const std::string& dir_key,
                                                    const std::string& name) {
  if (options_.ttl <= 0) return std::nullopt;
  const auto now = Now();
  MutexLock lock(mu_);
  auto dit = dirs_.find(DirId(bucket, dir_key));
  if (dit == dirs_.end()) return std::nullopt;
  const Dir& d = dit->second;
  auto it = d.names.find(name);
  if (it != d.names.end() && now < it->second.expires) {
    const Name& n = it->second;
    if (n.state == State::kMissing) return Hit{true, false, Kind::kFile, {}};
    return Hit{false, false, n.state == State::kDir ? Kind::kDir : Kind::kFile, n.attrs};
  }
  if (now < d.complete_until && it == d.names.end()) {
    auto child = dirs_.find(DirId(bucket, dir_key + name + "/"));
    if (child != dirs_.end() && now < child->second.complete_until) {
      for (const auto& [child_name, n] : child->second.names) {
        if (n.state != State::kMissing && now < n.expires) return Hit{false, false, Kind::kDir, {}};
      }
    }
    return Hit{true, true, Kind::kFile, {}};
  }
  return std::nullopt;
}

void NameCache::Record(const std::string& bucket, const std::string& dir_key,
                       const std::string& name, State state, const ObjectAttrs& attrs,
                       double seconds, std::chrono::steady_clock::time_point learned) {
  Dir& d = Touch(DirId(bucket, dir_key));
  // An answer to a request sent before what is held was learned (this
  // mount's own write while a HEAD was on its way) is older: it is dropped.
  auto held = d.names.find(name);
  if (held != d.names.end() && held->second.learned > learned && Now() < held->second.expires) {
    return;
  }
  Set(d, name, Name(state, attrs, learned, Until(seconds)));
}

void NameCache::StoreFile(const std::string& bucket, const std::string& dir_key,
                          const std::string& name, const ObjectAttrs& attrs) {
  if (options_.ttl <= 0) return;
  const auto asked =
      attrs.fetched != std::chrono::steady_clock::time_point{} ? attrs.fetched : Now();
  MutexLock lock(mu_);
  Record(bucket, dir_key, name, State::kFile, attrs, options_.ttl, asked);
  Evict();
}

void NameCache::StoreDir(const std::string& bucket, const std::string& dir_key,
                         const std::string& name, std::chrono::steady_clock::time_point asked) {
  if (options_.ttl <= 0) return;
  MutexLock lock(mu_);
  Record(bucket, dir_key, name, State::kDir, {}, options_.ttl, asked);
  Evict();
}

void NameCache::StoreMissing(const std::string& bucket, const std::string& dir_key,
                             const std::string& name, std::chrono::steady_clock::time_point asked) {
  if (options_.ttl <= 0 || options_.negative_ttl <= 0) return;
  MutexLock lock(mu_);
  Record(bucket, dir_key, name, State::kMissing, {}, std::min(options_.ttl, options_.negative_ttl),
         asked);
  Evict();
}

void NameCache::StoreListing(const std::string& bucket, const std::string& dir_key,
                             const std::vector<ListedEntry>& entries,
                             std::chrono::steady_clock::time_point started) {
  if (options_.ttl <= 0) return;
  const auto until = Until(options_.ttl);
  MutexLock lock(mu_);
  Dir& d = Touch(DirId(bucket, dir_key));
  // Keep what was learned after the listing began: it is newer.
  std::unordered_map<std::string, Name> names;
  names.reserve(entries.size());
  for (auto& [name, n] : d.names) {
    if (n.learned > started && n.expires > Now()) names.emplace(name, n);
  }
  for (const auto& e : entries) {
    ObjectAttrs attrs = e.attrs;
    if (e.kind == Kind::kFile) {
      attrs.fetched = started;  // what S3 said, no later than this
      // A listing carries no type: keep what a HEAD or this mount said of the same version.
      auto old = d.names.find(e.name);
      if (old != d.names.end() && old->second.state == State::kFile) {
        attrs = MergeKnown(old->second.attrs, std::move(attrs));
      }
    }
    names.try_emplace(
        e.name, Name(e.kind == Kind::kDir ? State::kDir : State::kFile, attrs, started, until));
  }
  total_ -= d.names.size();
  total_ += names.size();
  d.names = std::move(names);
  d.complete_until = until;
  d.misses = 0;
  Evict();
}

std::optional<std::vector<ListedEntry>> NameCache::Listing(const std::string& bucket,
                                                           const std::string& dir_key) {
  if (options_.ttl <= 0) return std::nullopt;
  const auto now = Now();
  MutexLock lock(mu_);
  auto dit = dirs_.find(DirId(bucket, dir_key));
  if (dit == dirs_.end() || now >= dit->second.complete_until) return std::nullopt;
  std::vector<ListedEntry> out;
  for (const auto& [name, n] : dit->second.names) {
    if (n.state == State::kMissing) continue;
    out.push_back({name, n.state == State::kDir ? Kind::kDir : Kind::kFile, n.attrs});
  }
  std::sort(out.begin(), out.end(),
            [](const ListedEntry& a, const ListedEntry& b) { return a.name < b.name; });
  return out;
}

void NameCache::Wrote(const std::string& bucket, const std::string& dir_key,
                      const std::string& name, const ObjectAttrs& attrs) {
  if (options_.ttl <= 0) return;
  MutexLock lock(mu_);
  // What this mount wrote is what S3 holds, learned now.
  Record(bucket, dir_key, name, State::kFile, attrs, options_.ttl, Now());
  Evict();
}

void NameCache::Removed(const std::string& bucket, const std::string& dir_key,
                        const std::string& name) {
  if (options_.ttl <= 0) return;
  MutexLock lock(mu_);
  Record(bucket, dir_key, name, State::kMissing, {}, options_.ttl, Now());
  Evict();
}

void NameCache::MadeDir(const std::string& bucket, const std::string& dir_key,
                        const std::string& name) {
  if (options_.ttl <= 0) return;
  MutexLock lock(mu_);
  Record(bucket, dir_key, name, State::kDir, {}, options_.ttl, Now());
  Dir& made = Touch(DirId(bucket, dir_key + name + "/"));
  total_ -= made.names.size();
  made.names.clear();
  made.complete_until = Until(options_.ttl);
  Evict();
}

void NameCache::Drop(const std::string& bucket, const std::string& dir_key,
                     const std::string& name) {
  MutexLock lock(mu_);
  auto it = dirs_.find(DirId(bucket, dir_key));
  if (it == dirs_.end()) return;
  total_ -= it->second.names.erase(name);
  it->second.complete_until = {};
}

void NameCache::ForgetTree(const std::string& bucket, const std::string& dir_key) {
  const std::string id = DirId(bucket, dir_key);
  MutexLock lock(mu_);
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (it->first.compare(0, id.size(), id) == 0) {
      total_ -= it->second.names.size();
      lru_.erase(it->second.lru);
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
}

bool NameCache::ShouldList(const std::string& bucket, const std::string& dir_key) {
  if (options_.ttl <= 0 || options_.misses_before_listing <= 0) return false;
  const auto now = Now();
  MutexLock lock(mu_);
  Dir& d = Touch(DirId(bucket, dir_key));
  if (d.listing) return false;
  if (now - d.misses_since > std::chrono::duration<double>(options_.ttl)) {
    d.misses_since = now;
    d.misses = 0;
  }
  // A listing that expired less than a TTL ago shows a directory in use:
  // its first miss refreshes it.
  const bool recently_complete =
      d.complete_until != std::chrono::steady_clock::time_point{} &&
      now - d.complete_until < std::chrono::duration<double>(options_.ttl);
  if (++d.misses < (recently_complete ? 1 : options_.misses_before_listing)) return false;
  d.listing = true;
  return true;
}

void NameCache::ListingDone(const std::string& bucket, const std::string& dir_key) {
  MutexLock lock(mu_);
  auto it = dirs_.find(DirId(bucket, dir_key));
  if (it == dirs_.end()) return;
  it->second.listing = false;
  it->second.misses = 0;
}

size_t NameCache::names() const {
  MutexLock lock(mu_);
  return total_;
}

}  // namespace bucketfs::fs
