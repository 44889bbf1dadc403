// MetadataCache: see metadata_cache.h.
#include "cache/metadata_cache.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace bucketfs::cache {
namespace {

constexpr size_t kMaxLmdbKey = 511;
constexpr std::string_view kVersionKey{"\x01version", 8};

}  // namespace

std::pair<std::string, std::string> SplitParent(const std::string& key) {
  const size_t slash = key.rfind('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash + 1), key.substr(slash + 1)};
}

Result<std::unique_ptr<MetadataCache>> MetadataCache::Open(MetadataCacheOptions options) {
  auto env = OpenVersioned(options.dir, options.lmdb, kVersionKey, kMetadataFormat);
  if (!env.ok() && IsCorruption(env.error())) {
    spdlog::warn("metadata cache {}: {}; rebuilding it", options.dir, env.error().message);
    RemoveEnvFiles(options.dir);
    env = OpenVersioned(options.dir, options.lmdb, kVersionKey, kMetadataFormat);
  }
  if (!env.ok()) return env.error();
  return std::unique_ptr<MetadataCache>(new MetadataCache(std::move(options), std::move(*env)));
}

MetadataCache::MetadataCache(MetadataCacheOptions options, std::unique_ptr<LmdbEnv> env)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock
                            : [] {
                                return static_cast<int64_t>(
                                    std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
                              }),
      env_(std::move(env)) {}

std::string MetadataCache::RecordKey(char type, const std::string& bucket,
                                     const std::string& key) const {
  std::string k;
  k.reserve(3 + options_.scope.size() + bucket.size() + key.size());
  k += type;
  k += options_.scope;
  k += '\0';
  k += bucket;
  k += '\0';
  k += key;
  return k;
}

bool MetadataCache::Fresh(int64_t fetched_at_ns, double ttl) const {
  if (ttl >= kIndefiniteTtl) return true;
  if (ttl <= 0) return false;
  return static_cast<double>(Now() - fetched_at_ns) < ttl * 1e9;
}

template <typename Decode>
auto MetadataCache::ReadRecord(char type, const std::string& bucket, const std::string& key,
                               Decode decode) const -> decltype(decode(std::string_view())) {
  const std::string k = RecordKey(type, bucket, key);
  if (k.size() > kMaxLmdbKey) return std::nullopt;  // never stored (see the Put* methods)
  decltype(decode(std::string_view())) out;
  Status s = env_->Read([&](LmdbTxn& t) -> Status {
    auto v = t.Get(k);
    if (!v.ok()) return v.error();
    if (*v) out = decode(**v);
    return Status::Ok();
  });
  if (!s.ok()) return std::nullopt;
  return out;
}

std::optional<CachedName> MetadataCache::GetName(const std::string& bucket,
                                                 const std::string& key) const {
  auto out = ReadRecord('N', bucket, key, DecodeName);
  if (!out) return std::nullopt;
  const double ttl =
      out->kind == NameKind::kMissing ? options_.negative_ttl_seconds : options_.ttl_seconds;
  if (!Fresh(out->fetched_at_ns, ttl)) return std::nullopt;
  return out;
}

std::optional<CachedName> MetadataCache::GetNameFromListing(const std::string& bucket,
                                                            const std::string& key) const {
  auto [parent, name] = SplitParent(key);
  // Clang before 16 cannot capture a structured binding: bind it by name.
  auto out = ReadRecord('L', bucket, parent,
                        [&leaf = name](std::string_view v) { return FindInListing(v, leaf); });
  // A complete listing without the name says it is missing (while the
  // listing is fresh, which uses the positive TTL: it is what S3 said).
  if (!out || !Fresh(out->fetched_at_ns, options_.ttl_seconds)) return std::nullopt;
  return out;
}

Status MetadataCache::PutName(const std::string& bucket, const std::string& key, CachedName name) {
  if (name.kind == NameKind::kMissing && options_.negative_ttl_seconds <= 0) return Status::Ok();
  const std::string k = RecordKey('N', bucket, key);
  if (k.size() > kMaxLmdbKey) return Status::Ok();
  if (name.fetched_at_ns == 0) name.fetched_at_ns = Now();
  const std::string v = EncodeName(name);
  return env_->Write([&](LmdbTxn& t) { return t.Put(k, v); });
}

Status MetadataCache::PutMissing(const std::string& bucket, const std::string& key) {
  return PutName(bucket, key, CachedName{NameKind::kMissing, 0, 0, "", 0});
}

std::optional<CachedListing> MetadataCache::GetListing(const std::string& bucket,
                                                       const std::string& dir_key) const {
  auto out = ReadRecord('L', bucket, dir_key, DecodeListing);
  if (!out || !out->complete) return std::nullopt;
  if (!Fresh(out->fetched_at_ns, options_.ttl_seconds)) return std::nullopt;
  return out;
}

Status MetadataCache::PutListing(const std::string& bucket, const std::string& dir_key,
                                 CachedListing listing) {
  const std::string k = RecordKey('L', bucket, dir_key);
  if (k.size() > kMaxLmdbKey) return Status::Ok();
  if (listing.fetched_at_ns == 0) listing.fetched_at_ns = Now();
  const std::string v = EncodeListing(listing);
  return env_->Write([&](LmdbTxn& t) { return t.Put(k, v); });
}

// `listings` is written through the loop's binding (fetched_at_ns), which clang-tidy 14 misses.
Status MetadataCache::PutListings(
    const std::string& bucket,
    std::vector<std::pair<std::string, CachedListing>> listings) {  // NOLINT(performance-*)
  const int64_t now = Now();
  std::vector<std::pair<std::string, std::string>> records;
  records.reserve(listings.size());
  for (auto& [dir_key, listing] : listings) {
    std::string k = RecordKey('L', bucket, dir_key);
    if (k.size() > kMaxLmdbKey) continue;
    if (listing.fetched_at_ns == 0) listing.fetched_at_ns = now;
    records.emplace_back(std::move(k), EncodeListing(listing));
  }
  if (records.empty()) return Status::Ok();
  return env_->Write([&](LmdbTxn& t) -> Status {
    for (const auto& [k, v] : records) {
      if (Status s = t.Put(k, v); !s.ok()) return s;
    }
    return Status::Ok();
  });
}

bool MetadataCache::HasListing(const std::string& bucket, const std::string& dir_key) const {
  // The fetch time of a complete listing, from its header alone.
  auto fetched_at = ReadRecord('L', bucket, dir_key,
                               [](std::string_view v) { return CompleteListingFetchedAt(v); });
  return fetched_at && Fresh(*fetched_at, options_.ttl_seconds);
}

Status MetadataCache::Invalidate(const std::string& bucket, const std::string& key) {
  const std::string parent = SplitParent(key).first;
  return env_->Write([&](LmdbTxn& t) -> Status {
    if (Status s = t.Del(RecordKey('N', bucket, key)); !s.ok()) return s;
    // The directory's own listing, when `key` names a directory.
    if (Status s = t.Del(RecordKey('L', bucket, key + "/")); !s.ok()) return s;
    return t.Del(RecordKey('L', bucket, parent));
  });
}

Status MetadataCache::InvalidateTree(const std::string& bucket, const std::string& dir_key) {
  if (Status s = env_->Write([&](LmdbTxn& t) -> Status {
        auto n = t.DelPrefix(RecordKey('N', bucket, dir_key));
        if (!n.ok()) return n.error();
        auto l = t.DelPrefix(RecordKey('L', bucket, dir_key));
        if (!l.ok()) return l.error();
        return Status::Ok();
      });
      !s.ok()) {
    return s;
  }
  if (dir_key.empty()) return Status::Ok();
  return Invalidate(bucket, dir_key.substr(0, dir_key.size() - 1));
}

}  // namespace bucketfs::cache
