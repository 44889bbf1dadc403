// CachedMetadata: see cached_metadata.h.
#include "fuse/cached_metadata.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "fuse/object_type.h"

namespace bucketfs::fs {
namespace {

int64_t ToNs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point FromNs(int64_t ns) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(ns)));
}

void LogFailure(const Status& s, const char* what) {
  if (!s.ok()) spdlog::debug("metadata cache {}: {}", what, s.error().ToString());
}

std::string WithoutSlash(const std::string& key) {
  return !key.empty() && key.back() == '/' ? key.substr(0, key.size() - 1) : key;
}

}  // namespace

std::unique_ptr<CachedMetadata> CachedMetadata::Open(const FsConfig& config) {
  if (config.cache_dir.empty() || config.metadata_ttl <= 0) return nullptr;
  cache::MetadataCacheOptions o;
  o.dir = config.cache_dir + "/metadata";
  o.scope = config.cache_scope;
  o.ttl_seconds = config.metadata_ttl;
  o.negative_ttl_seconds = config.negative_ttl;
  auto opened = cache::MetadataCache::Open(std::move(o));
  if (!opened.ok()) {
    spdlog::warn("metadata cache in {}/metadata not used: {}", config.cache_dir,
                 opened.error().ToString());
    return nullptr;
  }
  return std::make_unique<CachedMetadata>(std::move(*opened));
}

ObjectAttrs CachedMetadata::ToAttrs(const cache::CachedName& n) const {
  // The in-memory freshness clock is steady: date the record back by its age.
  const auto age = std::chrono::nanoseconds(std::max<int64_t>(0, cache_->Now() - n.fetched_at_ns));
  // The cache keeps no type: as after a listing, a small object's is unknown.
  return ObjectAttrs{n.size, FromNs(n.mtime_ns), n.etag,
                     std::chrono::steady_clock::now() -
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(age),
                     TypeFromListing(n.size)};
}

std::optional<CachedMetadata::Hit> CachedMetadata::Find(const std::string& bucket,
                                                        const std::string& file_key) const {
  auto n = cache_->GetName(bucket, file_key);
  if (!n) n = cache_->GetNameFromListing(bucket, file_key);
  if (!n) return std::nullopt;
  Hit hit;
  hit.missing = n->kind == cache::NameKind::kMissing;
  hit.kind = n->kind == cache::NameKind::kDir ? Kind::kDir : Kind::kFile;
  if (hit.kind == Kind::kFile && !hit.missing) hit.attrs = ToAttrs(*n);
  return hit;
}

std::optional<CachedMetadata::DirEntries> CachedMetadata::Listing(
    const std::string& bucket, const std::string& dir_key) const {
  auto l = cache_->GetListing(bucket, dir_key);
  if (!l) return std::nullopt;
  DirEntries dir;
  dir.fetched =
      ToAttrs(cache::CachedName{cache::NameKind::kDir, 0, 0, {}, l->fetched_at_ns}).fetched;
  std::vector<ListedEntry>& out = dir.entries;
  out.reserve(l->entries.size());
  for (auto& e : l->entries) {
    ListedEntry le;
    le.name = std::move(e.name);
    le.kind = e.is_dir ? Kind::kDir : Kind::kFile;
    if (!e.is_dir) {
      le.attrs = ToAttrs(cache::CachedName{cache::NameKind::kFile, e.size, e.mtime_ns,
                                           std::move(e.etag), l->fetched_at_ns});
    }
    out.push_back(std::move(le));
  }
  return dir;
}

void CachedMetadata::StoreFile(const std::string& bucket, const std::string& file_key,
                               const ObjectAttrs& attrs) {
  LogFailure(
      cache_->PutName(bucket, file_key,
                      {cache::NameKind::kFile, attrs.size, ToNs(attrs.mtime), attrs.etag, 0}),
      "put");
}

void CachedMetadata::StoreDir(const std::string& bucket, const std::string& file_key) {
  LogFailure(cache_->PutName(bucket, file_key, {cache::NameKind::kDir, 0, 0, "", 0}), "put");
}

void CachedMetadata::StoreMissing(const std::string& bucket, const std::string& file_key) {
  LogFailure(cache_->PutMissing(bucket, file_key), "put");
}

namespace {

cache::CachedListing ToCached(const std::vector<ListedEntry>& entries) {
  cache::CachedListing l;
  l.entries.reserve(entries.size());
  for (const ListedEntry& e : entries) {
    l.entries.push_back(
        {e.name, e.kind == Kind::kDir, e.attrs.size, ToNs(e.attrs.mtime), e.attrs.etag});
  }
  return l;
}

}  // namespace

void CachedMetadata::StoreListing(const std::string& bucket, const std::string& dir_key,
                                  const std::vector<ListedEntry>& entries) {
  LogFailure(cache_->PutListing(bucket, dir_key, ToCached(entries)), "put listing");
}

void CachedMetadata::StoreListings(
    const std::string& bucket,
    const std::vector<std::pair<std::string, std::vector<ListedEntry>>>& dirs) {
  std::vector<std::pair<std::string, cache::CachedListing>> listings;
  listings.reserve(dirs.size());
  for (const auto& [dir_key, entries] : dirs) listings.emplace_back(dir_key, ToCached(entries));
  LogFailure(cache_->PutListings(bucket, std::move(listings)), "put listings");
}

void CachedMetadata::Changed(const std::string& bucket, const std::string& key) {
  LogFailure(cache_->Invalidate(bucket, WithoutSlash(key)), "invalidate");
}

void CachedMetadata::ChangedTree(const std::string& bucket, const std::string& dir_key) {
  LogFailure(cache_->InvalidateTree(bucket, dir_key), "invalidate tree");
}

}  // namespace bucketfs::fs
