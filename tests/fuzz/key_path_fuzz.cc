// Fuzz target: the mapping between S3 keys and paths in the mount.
//  - key -> name: DirListing turns a listing page of arbitrary keys under a
//    directory prefix into entries (fuse/dir_listing.h). Every entry must be
//    a valid name, appear once, and stand for a key or common prefix of the
//    page; every valid name the page holds must be listed.
//  - name -> key: a directory's key plus a valid name splits back into the
//    same directory and name (cache::SplitParent, used by every write path).
//  - the mount SOURCE: s3://BUCKET/PREFIX gives a bucket without '/' and a
//    prefix that is empty or ends in '/'.
// Input: fields separated by '\n'; the first is the prefix, then keys (a
// key ending in '/' is a common prefix).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cache/metadata_cache.h"
#include "fuse/dir_listing.h"
#include "mount-tools/mount_options.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::string> Split(std::string_view in) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t nl = in.find('\n', start);
    out.emplace_back(in.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) return out;
    start = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> fields = Split(in);
  std::string prefix = fields[0];
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';

  bucketfs::s3::ListObjectsV2Result page;
  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string key = prefix + fields[i];
    if (!key.empty() && key.back() == '/') {
      page.common_prefixes.push_back(key);
    } else {
      bucketfs::s3::ObjectInfo o;
      o.key = key;
      o.size = i;
      page.objects.push_back(std::move(o));
    }
  }
  std::set<std::string> objects;
  for (const auto& o : page.objects) objects.insert(o.key);
  const std::set<std::string> prefixes(page.common_prefixes.begin(), page.common_prefixes.end());

  bucketfs::fs::DirListing listing(prefix);
  listing.AddPage(page, std::chrono::steady_clock::now());
  std::set<std::string> names;
  for (const auto& e : listing.entries()) {
    Check(bucketfs::fs::IsValidName(e.name));
    Check(names.insert(e.name).second);
    if (e.kind == bucketfs::fs::Kind::kFile) {
      Check(objects.count(prefix + e.name) == 1);
    } else {
      Check(prefixes.count(prefix + e.name + "/") == 1);
      Check(objects.count(prefix + e.name) == 0);  // a file of the same name wins
    }
    Check(listing.Contains(e.name));
    // name -> key -> (directory, name)
    const auto [dir, name] = bucketfs::cache::SplitParent(prefix + e.name);
    Check(dir == prefix && name == e.name);
  }
  for (const auto& k : objects) {
    if (bucketfs::fs::IsValidName(k.substr(prefix.size())))
      Check(names.count(k.substr(prefix.size())) == 1);
  }
  for (const auto& p : prefixes) {
    const std::string name = p.substr(prefix.size(), p.size() - prefix.size() - 1);
    if (bucketfs::fs::IsValidName(name)) Check(names.count(name) == 1);
  }

  for (const std::string& f : fields) {
    const auto [dir, name] = bucketfs::cache::SplitParent(f);
    Check(dir + name == f);
    Check(name.find('/') == std::string::npos);
    Check(dir.empty() || dir.back() == '/');
    auto source = bucketfs::tools::ParseMountSource(f);
    if (source.ok()) {
      Check(source->bucket.find('/') == std::string::npos);
      Check(source->prefix.empty() || source->prefix.back() == '/');
    } else {
      Check(source.error().errno_value == EINVAL && !source.error().message.empty());
    }
  }
  return 0;
}
