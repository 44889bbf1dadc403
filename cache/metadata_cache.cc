// MetadataCache: see metadata_cache.h.
#include "cache/metadata_cache.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace bucketfs::cache {
namespace {

constexpr size_t kMaxLmdbKey = 511;
constexpr std::string_view kVersionKey{"\x01version", 8};

// Little-endian fixed-width encoding; Reader fails (ok() false) on any
// overrun, so a damaged record reads as a miss rather than as garbage.
class Writer {
 public:
  template <typename T>
  void Put(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    out_.append(buf, sizeof(T));
  }
  void PutString(const std::string& s) {
    Put<uint32_t>(static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T Get() {
    T v{};
    if (in_.size() < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return v;
  }
  std::string GetString() { return std::string(GetView()); }
  // The same without a copy: valid while the input is.
  std::string_view GetView() {
    const auto n = Get<uint32_t>();
    if (!ok_ || in_.size() < n) {
      ok_ = false;
      return {};
    }
    std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && in_.empty(); }

 private:
  std::string_view in_;
  bool ok_ = true;
};

std::string EncodeName(const CachedName& n) {
  Writer w;
  w.Put<uint8_t>(static_cast<uint8_t>(n.kind));
  w.Put<uint64_t>(n.size);
  w.Put<int64_t>(n.mtime_ns);
  w.Put<int64_t>(n.fetched_at_ns);
  w.PutString(n.etag);
  return w.Take();
}

std::optional<CachedName> DecodeName(std::string_view v) {
  Reader r(v);
  CachedName n;
  const auto kind = r.Get<uint8_t>();
  n.size = r.Get<uint64_t>();
  n.mtime_ns = r.Get<int64_t>();
  n.fetched_at_ns = r.Get<int64_t>();
  n.etag = r.GetString();
  if (!r.done() || kind > static_cast<uint8_t>(NameKind::kMissing)) return std::nullopt;
  n.kind = static_cast<NameKind>(kind);
  return n;
}

std::string EncodeListing(const CachedListing& l) {
  Writer w;
  w.Put<int64_t>(l.fetched_at_ns);
  w.Put<uint8_t>(l.complete ? 1 : 0);
  w.Put<uint64_t>(l.entries.size());
  for (const CachedEntry& e : l.entries) {
    w.PutString(e.name);
    w.Put<uint8_t>(e.is_dir ? 1 : 0);
    w.Put<uint64_t>(e.size);
    w.Put<int64_t>(e.mtime_ns);
    w.PutString(e.etag);
  }
  return w.Take();
}

// The header of an encoded listing, and each entry passed to `on_entry` as
// views into `v` (valid while `v` is). False when the record does not decode
// whole. DecodeListing and FindInListing share it so the format is read in
// one place.
struct ListingHeader {
  int64_t fetched_at_ns = 0;
  bool complete = false;
  uint64_t count = 0;
};
struct EntryView {
  std::string_view name;
  bool is_dir = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  std::string_view etag;
};
template <typename OnHeader, typename OnEntry>
bool ScanListing(std::string_view v, OnHeader on_header, OnEntry on_entry) {
  Reader r(v);
  ListingHeader h;
  h.fetched_at_ns = r.Get<int64_t>();
  h.complete = r.Get<uint8_t>() != 0;
  h.count = r.Get<uint64_t>();
  if (!r.ok() || h.count > v.size()) return false;  // each entry takes > 1 byte
  if (!on_header(h)) return false;
  for (uint64_t i = 0; i < h.count && r.ok(); ++i) {
    EntryView e;
    e.name = r.GetView();
    e.is_dir = r.Get<uint8_t>() != 0;
    e.size = r.Get<uint64_t>();
    e.mtime_ns = r.Get<int64_t>();
    e.etag = r.GetView();
    if (r.ok()) on_entry(e);
  }
  return r.done();
}

std::optional<CachedListing> DecodeListing(std::string_view v) {
  CachedListing l;
  const bool ok = ScanListing(
      v,
      [&](const ListingHeader& h) {
        l.fetched_at_ns = h.fetched_at_ns;
        l.complete = h.complete;
        l.entries.reserve(h.count);
        return true;
      },
      [&](const EntryView& e) {
        l.entries.push_back(
            CachedEntry{std::string(e.name), e.is_dir, e.size, e.mtime_ns, std::string(e.etag)});
      });
  if (!ok) return std::nullopt;
  return l;
}

// What an encoded listing says of `name` (kMissing: complete without it),
// scanned in place: a lookup in a directory of N entries allocates nothing
// for the N - 1 others (decoding them all cost 50-70 us a lookup at 100
// entries). Nullopt: incomplete or undecodable, as DecodeListing.
std::optional<CachedName> FindInListing(std::string_view v, std::string_view name) {
  int64_t fetched_at = 0;
  std::optional<CachedName> found;
  const bool ok = ScanListing(
      v,
      [&](const ListingHeader& h) {
        fetched_at = h.fetched_at_ns;
        return h.complete;
      },
      [&](const EntryView& e) {
        if (found || e.name != name) return;
        found = CachedName{e.is_dir ? NameKind::kDir : NameKind::kFile, e.size, e.mtime_ns,
                           std::string(e.etag), fetched_at};
      });
  if (!ok) return std::nullopt;  // the whole record must decode, as in DecodeListing
  if (!found) found = CachedName{NameKind::kMissing, 0, 0, "", fetched_at};
  return found;
}

void RemoveEnvFiles(const std::string& dir) {
  ::unlink((dir + "/data.mdb").c_str());
  ::unlink((dir + "/lock.mdb").c_str());
}

// Opens the environment and checks its format record; a corrupt, truncated
// or foreign-version environment is reported as EUCLEAN.
Result<std::unique_ptr<LmdbEnv>> OpenChecked(const MetadataCacheOptions& o) {
  auto env = LmdbEnv::Open(o.dir, o.lmdb);
  if (!env.ok()) return env.error();
  std::optional<std::string> version;
  Status read = (*env)->Read([&](LmdbTxn& t) -> Status {
    auto v = t.Get(kVersionKey);
    if (!v.ok()) return v.error();
    version = std::move(*v);
    return Status::Ok();
  });
  if (!read.ok()) return read.error();
  if (version && *version != kMetadataFormat) {
    return MakeError(EUCLEAN, "CacheVersion",
                     "format '" + *version + "', expected '" + std::string(kMetadataFormat) + "'");
  }
  if (!version) {
    Status s = (*env)->Write([](LmdbTxn& t) { return t.Put(kVersionKey, kMetadataFormat); });
    if (!s.ok()) return s.error();
  }
  return std::move(*env);
}

}  // namespace

std::pair<std::string, std::string> SplitParent(const std::string& key) {
  const size_t slash = key.rfind('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash + 1), key.substr(slash + 1)};
}

Result<std::unique_ptr<MetadataCache>> MetadataCache::Open(MetadataCacheOptions options) {
  auto env = OpenChecked(options);
  if (!env.ok() && IsCorruption(env.error())) {
    spdlog::warn("metadata cache {}: {}; rebuilding it", options.dir, env.error().message);
    RemoveEnvFiles(options.dir);
    env = OpenChecked(options);
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
  auto fetched_at = ReadRecord('L', bucket, dir_key, [](std::string_view v) {
    Reader r(v);  // the header of EncodeListing: fetched_at, complete
    const auto at = r.Get<int64_t>();
    const bool complete = r.Get<uint8_t>() != 0 && r.ok();
    return complete ? std::optional<int64_t>(at) : std::nullopt;
  });
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
