#include "fuse/sibling_hints.h"

namespace bucketfs::fs {

void SiblingHints::Index(Listing& l, const std::vector<ListedEntry>& entries) {
  for (const auto& e : entries) {
    if (e.kind != Kind::kFile) continue;
    l.index.emplace(e.name, l.files.size());
    l.files.push_back({l.bucket, l.dir_key + e.name, e.attrs.etag, e.attrs.size});
  }
}

void SiblingHints::Insert(Ino dir, std::shared_ptr<Listing> listing) {
  MutexLock lock(mu_);
  if (listings_.insert_or_assign(dir, std::move(listing)).second) order_.push_back(dir);
  while (order_.size() > max_dirs_) {
    listings_.erase(order_.front());
    order_.pop_front();
  }
}

void SiblingHints::Remember(Ino dir, const std::string& bucket, const std::string& dir_key,
                            const std::vector<ListedEntry>& entries) {
  auto listing = std::make_shared<Listing>();
  listing->bucket = bucket;
  listing->dir_key = dir_key;
  {
    MutexLock lock(listing->mu);
    Index(*listing, entries);
  }
  Insert(dir, std::move(listing));
}

void SiblingHints::RememberLazy(Ino dir, const std::string& bucket, const std::string& dir_key,
                                EntriesSource source) {
  auto listing = std::make_shared<Listing>();
  listing->bucket = bucket;
  listing->dir_key = dir_key;
  {
    MutexLock lock(listing->mu);
    listing->source = std::move(source);
  }
  Insert(dir, std::move(listing));
}

std::shared_ptr<SiblingHints::Listing> SiblingHints::Find(Ino dir) const {
  MutexLock lock(mu_);
  auto it = listings_.find(dir);
  return it == listings_.end() ? nullptr : it->second;
}

void SiblingHints::IndexLazily(Listing& l) {
  if (!l.source) return;
  if (auto entries = l.source()) Index(l, *entries);
  l.source = nullptr;
}

std::vector<ObjectVersion> SiblingHints::FilesAfter(const Listing& l, size_t pos, size_t n) {
  std::vector<ObjectVersion> out;
  for (size_t i = pos + 1; i < l.files.size() && out.size() < n; ++i) out.push_back(l.files[i]);
  return out;
}

std::optional<size_t> SiblingHints::Position(Listing& l, const std::string& name) {
  IndexLazily(l);
  auto found = l.index.find(name);
  if (found == l.index.end()) return std::nullopt;
  return found->second;
}

std::vector<ObjectVersion> SiblingHints::After(Ino dir, const std::string& name, size_t n) const {
  std::shared_ptr<Listing> listing = Find(dir);
  if (!listing) return {};
  MutexLock lock(listing->mu);
  auto pos = Position(*listing, name);
  if (!pos) return {};
  return FilesAfter(*listing, *pos, n);
}

std::vector<ObjectVersion> SiblingHints::AfterInOrder(Ino dir, const std::string& name, size_t n) {
  std::shared_ptr<Listing> listing = Find(dir);
  if (!listing) return {};
  MutexLock lock(listing->mu);
  auto found = Position(*listing, name);
  if (!found) return {};
  const size_t pos = *found;
  bool in_order = false;
  for (size_t p : listing->recent) in_order |= p < pos && pos <= p + n;
  listing->recent.push_back(pos);
  if (listing->recent.size() > kRecentOpens) listing->recent.pop_front();
  if (!in_order) return {};
  return FilesAfter(*listing, pos, n);
}

}  // namespace bucketfs::fs
