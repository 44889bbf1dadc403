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
  std::lock_guard lock(mu_);
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
    std::lock_guard lock(listing->mu);
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
    std::lock_guard lock(listing->mu);
    listing->source = std::move(source);
  }
  Insert(dir, std::move(listing));
}

std::vector<ObjectVersion> SiblingHints::After(Ino dir, const std::string& name, size_t n) const {
  std::shared_ptr<Listing> listing;
  {
    std::lock_guard lock(mu_);
    auto it = listings_.find(dir);
    if (it == listings_.end()) return {};
    listing = it->second;
  }
  std::lock_guard lock(listing->mu);
  if (listing->source) {
    if (auto entries = listing->source()) Index(*listing, *entries);
    listing->source = nullptr;
  }
  auto pos = listing->index.find(name);
  if (pos == listing->index.end()) return {};
  std::vector<ObjectVersion> out;
  for (size_t i = pos->second + 1; i < listing->files.size() && out.size() < n; ++i) {
    out.push_back(listing->files[i]);
  }
  return out;
}

}  // namespace bucketfs::fs
