#include "fuse/dir_listing.h"

#include <chrono>

namespace bucketfs::fs {

bool IsValidName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  if (name.size() > kMaxNameLength) return false;
  return name.find('\0') == std::string_view::npos && name.find('/') == std::string_view::npos;
}

void DirListing::Emit(ListedEntry entry) {
  if (!names_.insert(entry.name).second) return;
  entries_.push_back(std::move(entry));
}

void DirListing::AddPage(const s3::ListObjectsV2Result& page) {
  std::string last_key;  // the greatest key or prefix of this page
  const auto now = std::chrono::steady_clock::now();
  for (const auto& p : page.common_prefixes) {
    if (p > last_key) last_key = p;
    if (p.size() <= prefix_.size() + 1 || p.compare(0, prefix_.size(), prefix_) != 0) continue;
    std::string name = p.substr(prefix_.size(), p.size() - prefix_.size() - 1);
    if (!IsValidName(name)) continue;
    dir_names_.insert(name);
    Emit({name, Kind::kDir, {}});
  }
  for (const auto& o : page.objects) {
    if (o.key > last_key) last_key = o.key;
    if (o.key.size() <= prefix_.size() || o.key.compare(0, prefix_.size(), prefix_) != 0) {
      continue;
    }
    std::string name = o.key.substr(prefix_.size());
    if (!IsValidName(name)) continue;
    ListedEntry e{name, Kind::kFile, {o.size, o.last_modified, o.etag, now}};
    held_.push_back(std::move(e));
  }
  // A held file "x" is certain once this page reached past "x/".
  std::vector<ListedEntry> still_held;
  for (auto& e : held_) {
    if (dir_names_.count(e.name)) continue;  // the directory wins
    if (last_key >= prefix_ + e.name + "/") {
      Emit(std::move(e));
    } else {
      still_held.push_back(std::move(e));
    }
  }
  held_ = std::move(still_held);
  if (!page.is_truncated) Finish();
}

void DirListing::Finish() {
  for (auto& e : held_) {
    if (!dir_names_.count(e.name)) Emit(std::move(e));
  }
  held_.clear();
}

void DirListing::AddLocal(ListedEntry entry) {
  if (!IsValidName(entry.name)) return;
  if (entry.kind == Kind::kDir) dir_names_.insert(entry.name);
  Emit(std::move(entry));
}

}  // namespace bucketfs::fs
