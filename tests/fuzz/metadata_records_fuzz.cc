// Fuzz target: the decoders of the metadata cache's LMDB records
// (cache/metadata_records.h), which read a file that may be damaged or
// written by another version. Any bytes must decode or give nullopt; what
// decodes must encode back to the same record (names byte for byte), and
// FindInListing must agree with DecodeListing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cache/metadata_records.h"

using namespace bucketfs::cache;  // NOLINT(google-build-using-namespace)

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

bool SameListing(const CachedListing& a, const CachedListing& b) {
  if (a.fetched_at_ns != b.fetched_at_ns || a.complete != b.complete ||
      a.entries.size() != b.entries.size()) {
    return false;
  }
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const CachedEntry& x = a.entries[i];
    const CachedEntry& y = b.entries[i];
    if (x.name != y.name || x.is_dir != y.is_dir || x.size != y.size || x.mtime_ns != y.mtime_ns ||
        x.etag != y.etag) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view v(reinterpret_cast<const char*>(data), size);

  if (auto name = DecodeName(v)) Check(EncodeName(*name) == v);

  auto listing = DecodeListing(v);
  if (listing) {
    const std::string again = EncodeListing(*listing);
    auto twice = DecodeListing(again);
    Check(twice && SameListing(*listing, *twice));
    Check(CompleteListingFetchedAt(v).has_value() == listing->complete);
    for (const CachedEntry& e : listing->entries) {
      auto found = FindInListing(v, e.name);
      Check(found.has_value() == listing->complete);
      if (found) Check(found->kind != NameKind::kMissing);
    }
    auto absent = FindInListing(v, std::string(300, '\x7f'));  // longer than any name we store
    if (absent && listing->entries.empty()) Check(absent->kind == NameKind::kMissing);
  } else {
    // A listing that does not decode whole is never half-read.
    Check(!FindInListing(v, "").has_value());
  }
  return 0;
}
