// The records MetadataCache keeps in LMDB, and their byte encoding.
//
// Records come back from a file other processes (and older versions) wrote,
// which may be damaged: every decoder checks every length against the bytes
// it has and returns nullopt for anything that does not decode whole.
// Little-endian fixed-width integers; strings are a uint32 length then bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bucketfs::cache {

enum class NameKind : uint8_t { kFile = 0, kDir = 1, kMissing = 2 };

struct CachedName {
  NameKind kind = NameKind::kFile;
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // since the Unix epoch
  std::string etag;
  int64_t fetched_at_ns = 0;
};

struct CachedEntry {
  std::string name;
  bool is_dir = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  std::string etag;
};

struct CachedListing {
  std::vector<CachedEntry> entries;
  int64_t fetched_at_ns = 0;
  bool complete = true;
};

std::string EncodeName(const CachedName& n);
std::optional<CachedName> DecodeName(std::string_view v);

std::string EncodeListing(const CachedListing& l);
std::optional<CachedListing> DecodeListing(std::string_view v);
// What an encoded listing says of `name` (kMissing: complete without it),
// read in place without decoding the other entries. Nullopt: incomplete or
// undecodable, as DecodeListing.
std::optional<CachedName> FindInListing(std::string_view v, std::string_view name);
// The fetch time of an encoded complete listing, from its header alone.
std::optional<int64_t> CompleteListingFetchedAt(std::string_view v);

}  // namespace bucketfs::cache
