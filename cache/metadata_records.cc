// The records of MetadataCache: see metadata_records.h.
#include "cache/metadata_records.h"

#include <cstring>

namespace bucketfs::cache {
namespace {

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
  // An entry takes at least 25 bytes (two lengths, a flag, two integers):
  // a damaged count cannot make DecodeListing reserve more than the record.
  if (!r.ok() || h.count > v.size() / 25) return false;
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

}  // namespace

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

// Scanned in place: a lookup in a directory of N entries allocates nothing
// for the N - 1 others.
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

std::optional<int64_t> CompleteListingFetchedAt(std::string_view v) {
  Reader r(v);  // the header of EncodeListing: fetched_at, complete
  const auto at = r.Get<int64_t>();
  const bool complete = r.Get<uint8_t>() != 0 && r.ok();
  return complete ? std::optional<int64_t>(at) : std::nullopt;
}

}  // namespace bucketfs::cache
