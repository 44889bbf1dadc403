#include "fuse/sibling_hints.h"

namespace bucketfs::fs {

void SiblingHints::Remember(Ino dir, const std::string& bucket, const std::string& dir_key,
                            const std::vector<ListedEntry>& entries) {
  auto listing = std::make_shared<Listing>();
  for (const auto& e : entries) {
    if (e.kind != Kind::kFile) continue;
    listing->index.emplace(e.name, listing->files.size());
    listing->files.push_back({bucket, dir_key + e.name, e.attrs.etag, e.attrs.size});
  }
  std::lock_guard lock(mu_);
  if (listings_.insert_or_assign(dir, std::move(listing)).second) order_.push_back(dir);
  while (order_.size() > max_dirs_) {
    listings_.erase(order_.front());
    order_.pop_front();
  }
}

std::vector<ObjectVersion> SiblingHints::After(Ino dir, const std::string& name, size_t n) const {
  std::shared_ptr<const Listing> listing;
  {
    std::lock_guard lock(mu_);
    auto it = listings_.find(dir);
    if (it == listings_.end()) return {};
    listing = it->second;
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
