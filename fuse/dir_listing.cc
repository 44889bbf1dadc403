#include "fuse/dir_listing.h"

#include <algorithm>
#include <chrono>

#include "fuse/object_type.h"

namespace bucketfs::fs {

bool IsValidName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  if (name.size() > kMaxNameLength) return false;
  return name.find('\0') == std::string_view::npos && name.find('/') == std::string_view::npos;
}

void DirListing::IndexNames() const {
  for (; indexed_ < entries_.size(); ++indexed_) names_.insert(entries_[indexed_].name);
}

void DirListing::Emit(ListedEntry entry) {
  IndexNames();
  if (!names_.insert(entry.name).second) return;
  entries_.push_back(std::move(entry));
  indexed_ = entries_.size();
}

void DirListing::AddComplete(std::vector<ListedEntry> entries) { entries_ = std::move(entries); }

void DirListing::AddPage(const s3::ListObjectsV2Result& page,
                         std::chrono::steady_clock::time_point asked) {
  // Objects and prefixes merged in key order (each list is sorted).
  struct Item {
    const std::string* key;
    const s3::ObjectInfo* object;  // null for a common prefix
  };
  std::vector<Item> items;
  items.reserve(page.objects.size() + page.common_prefixes.size());
  for (const auto& o : page.objects) items.push_back({&o.key, &o});
  for (const auto& p : page.common_prefixes) items.push_back({&p, nullptr});
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return *a.key < *b.key; });
  for (const Item& item : items) {
    const std::string& key = *item.key;
    if (key.size() <= prefix_.size() || key.compare(0, prefix_.size(), prefix_) != 0) continue;
    if (item.object == nullptr) {
      std::string name = key.substr(prefix_.size(), key.size() - prefix_.size() - 1);
      if (!IsValidName(name)) continue;
      Emit({name, Kind::kDir, {}});  // a file "name" came first (it sorts before "name/") and won
      continue;
    }
    std::string name = key.substr(prefix_.size());
    if (!IsValidName(name)) continue;
    const s3::ObjectInfo& o = *item.object;
    Emit({name, Kind::kFile, {o.size, o.last_modified, o.etag, asked, TypeFromListing(o.size)}});
  }
}

void DirListing::AddLocal(ListedEntry entry) {
  if (!IsValidName(entry.name)) return;
  Emit(std::move(entry));
}

Result<std::vector<ListedEntry>> ListWholeDirectory(s3::ObjectClient& client,
                                                    const std::string& bucket,
                                                    const std::string& dir_key, int page_size,
                                                    size_t max_keys,
                                                    const std::function<bool()>& stop) {
  DirListing listing(dir_key);
  s3::ListObjectsV2Params p;
  p.bucket = bucket;
  p.prefix = dir_key;
  p.delimiter = '/';  // a char: g++ 12 reports a bogus -Wrestrict for "/" here
  p.max_keys = page_size;
  size_t keys = 0;
  for (;;) {
    if (stop && stop()) return MakeError(ECANCELED, "Stopped", dir_key);
    const auto asked = std::chrono::steady_clock::now();
    auto r = client.ListObjectsV2(p);
    if (!r.ok()) return r.error();
    listing.AddPage(*r, asked);
    keys += r->objects.size() + r->common_prefixes.size();
    if (keys > max_keys) return MakeError(EFBIG, "TooLarge", dir_key);
    if (!r->is_truncated) break;
    if (r->next_continuation_token.empty()) {
      return MakeError(EIO, "Incomplete", "truncated listing without a continuation token");
    }
    p.continuation_token = r->next_continuation_token;
  }
  return listing.entries();
}

}  // namespace bucketfs::fs
