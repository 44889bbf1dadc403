// SubtreeLister: see subtree_lister.h.
#include "fuse/subtree_lister.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

namespace bucketfs::fs {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The synthesized delimiter pages of every directory not yet complete.
class PageBuilder {
 public:
  explicit PageBuilder(const std::vector<std::string>& dirs) {
    for (const auto& d : dirs) open_[d];  // a subdirectory without keys lists empty
  }

  // `top`: the range subdirectory `o.key` is under.
  void Add(const std::string& top, const s3::ObjectInfo& o) {
    std::string dir = top;
    size_t start = top.size();
    for (;;) {
      s3::ListObjectsV2Result& page = open_[dir];
      const size_t slash = o.key.find('/', start);
      if (slash == std::string::npos) {
        page.objects.push_back(o);
        return;
      }
      std::string child = o.key.substr(0, slash + 1);
      if (page.common_prefixes.empty() || page.common_prefixes.back() != child) {
        page.common_prefixes.push_back(child);
      }
      dir = std::move(child);
      start = slash + 1;
    }
  }

  // Moves out the directories complete once the listing reached `last`
  // (null: the range ended, all are complete); `asked`: when the listing began.
  CompleteListings TakeComplete(const std::string* last,
                                std::chrono::steady_clock::time_point asked) {
    CompleteListings out;
    for (auto it = open_.begin(); it != open_.end();) {
      const std::string& dir = it->first;
      if (last != nullptr && (*last <= dir || StartsWith(*last, dir))) {
        ++it;
        continue;
      }
      DirListing listing(dir);
      listing.AddPage(it->second, asked);
      out.emplace_back(dir, listing.entries());
      it = open_.erase(it);
    }
    return out;
  }

  bool IsOpen(const std::string& dir) const { return open_.count(dir) != 0; }

 private:
  std::map<std::string, s3::ListObjectsV2Result> open_;
};

}  // namespace

std::vector<std::string> ListSubtrees(s3::ObjectClient& client, const SubtreeRange& range,
                                      int page_size, int max_pages,
                                      const std::function<void(CompleteListings)>& sink,
                                      const std::function<bool()>& stop) {
  if (range.dirs.empty()) return {};
  PageBuilder pages(range.dirs);
  s3::ListObjectsV2Params p;
  p.bucket = range.bucket;
  p.prefix = range.parent;
  // The first subdirectory's name without its "/": every key of its subtree
  // sorts after it.
  p.start_after = range.dirs.front().substr(0, range.dirs.front().size() - 1);
  p.max_keys = page_size;
  bool ended = false;
  const auto asked = std::chrono::steady_clock::now();
  for (int page = 0; page < max_pages && !ended && !stop(); ++page) {
    auto r = client.ListObjectsV2(p);
    if (!r.ok()) {
      spdlog::debug("flat ListObjectsV2 s3://{}/{} after {}: {}", p.bucket, p.prefix, p.start_after,
                    r.error().ToString());
      break;
    }
    const std::string* last = nullptr;
    for (const s3::ObjectInfo& o : r->objects) {
      if (!range.end.empty() && o.key >= range.end) {
        ended = true;
        break;
      }
      last = &o.key;
      const size_t slash = o.key.find('/', range.parent.size());
      if (slash == std::string::npos) continue;  // a file of the parent itself
      const std::string top = o.key.substr(0, slash + 1);
      if (!std::binary_search(range.dirs.begin(), range.dirs.end(), top)) continue;
      pages.Add(top, o);
    }
    if (!r->is_truncated) ended = true;
    if (ended) last = nullptr;
    if (ended || last != nullptr) {
      CompleteListings done = pages.TakeComplete(last, asked);
      if (!done.empty()) sink(std::move(done));
    }
    if (!ended && r->next_continuation_token.empty()) break;  // cannot go on: the rest is left
    p.continuation_token = r->next_continuation_token;
  }
  std::vector<std::string> left;
  for (const auto& d : range.dirs) {
    if (pages.IsOpen(d)) left.push_back(d);
  }
  return left;
}

}  // namespace bucketfs::fs
