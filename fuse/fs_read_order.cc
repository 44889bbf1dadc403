// Filesystem: the read order a loader announces (read_order.h). Each file
// entering the window is resolved off the FUSE threads (a fresh name-cache
// answer, else a HEAD whose answer the open then finds fresh), and the
// resolved files are handed to the read path, which fetches small ones
// whole within its hint budget and drops those never opened.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "cache/metadata_cache.h"
#include "fuse/filesystem.h"

namespace bucketfs::fs {

Result<ReadOrder::Target> Filesystem::OrderTarget(std::string_view path) const {
  while (path.starts_with("./")) path.remove_prefix(2);
  const std::string bad = "order: '" + std::string(path) + "' is not a file path in the mount";
  if (path.empty() || path.front() == '/' || path.back() == '/') {
    return MakeError(EINVAL, "BadPath", bad);
  }
  for (size_t start = 0; start <= path.size();) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return MakeError(EINVAL, "BadPath", bad);
    start = end + 1;
  }
  if (!config_.bucket.empty())
    return ReadOrder::Target{config_.bucket, config_.prefix + std::string(path)};
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos) return MakeError(EINVAL, "BadPath", bad);
  return ReadOrder::Target{std::string(path.substr(0, slash)), std::string(path.substr(slash + 1))};
}

Result<size_t> Filesystem::AnnounceOrder(bool reset, const std::vector<std::string>& paths) {
  std::vector<ReadOrder::Target> targets;
  targets.reserve(paths.size());
  for (const auto& p : paths) {
    auto t = OrderTarget(p);
    if (!t.ok()) return t.error();
    targets.push_back(std::move(*t));
  }
  if (reset) order_->Reset();
  const size_t taken = order_->Add(std::move(targets));
  AdvanceOrder();
  return taken;
}

void Filesystem::AdvanceOrder() {
  auto todo = order_->TakeUnresolved();
  for (auto& [pos, target] : todo.positions) {
    order_pool_->Post([this, pos = pos, gen = todo.generation, target = std::move(target)] {
      order_->Resolved(pos, gen, ResolveForOrder(target));
      HintOrderedFiles();
    });
  }
  if (todo.positions.empty()) HintOrderedFiles();
}

void Filesystem::HintOrderedFiles() {
  MutexLock lock(order_hint_mu_);
  readers_->HintNextFiles(order_->Wanted());
}

std::optional<ObjectVersion> Filesystem::ResolveForOrder(const ReadOrder::Target& t) {
  if (local_.FileAttrs(t.bucket, t.key) || IsUnlinked(t.bucket, t.key)) return std::nullopt;
  const auto [dir_key, name] = cache::SplitParent(t.key);
  auto version = [&](const ObjectAttrs& a) -> std::optional<ObjectVersion> {
    if (a.type == ObjectType::kLink) return std::nullopt;
    return ObjectVersion{t.bucket, t.key, a.etag, a.size};
  };
  if (auto hit = names_.Find(t.bucket, dir_key, name)) {
    if (hit->missing || hit->kind != Kind::kFile) return std::nullopt;
    if (!TypeUnknown(hit->attrs)) return version(hit->attrs);
  }
  s3::HeadObjectParams p;
  p.bucket = t.bucket;
  p.key = t.key;
  const auto asked = std::chrono::steady_clock::now();
  auto head = client_->HeadObject(p);
  if (!head.ok()) {
    spdlog::debug("read order: HeadObject s3://{}/{}: {}", t.bucket, t.key,
                  head.error().ToString());
    return std::nullopt;
  }
  const ObjectAttrs attrs = FromHead(*head, asked);
  names_.StoreFile(t.bucket, dir_key, name, attrs);
  if (meta_) meta_->StoreFile(t.bucket, t.key, attrs);
  return version(attrs);
}

}  // namespace bucketfs::fs
