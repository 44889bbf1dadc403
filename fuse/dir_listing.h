// DirListing: turns ListObjectsV2 pages (delimiter "/") of one directory into
// directory entries, in arrival order, as the pages come.
//
// Rules (docs/SEMANTICS.md):
// - A name that is empty, ".", "..", longer than 255 bytes or holding a NUL is
//   skipped (keys with "//", "./" or "../" components, and the directory's own
//   marker object, therefore never show).
// - A file and a directory with the same name: the file wins, the directory
//   is hidden (a lookup that finds the object need not wait for a LIST). The
//   key "x" sorts before every "x/..." key, so the file always comes first.
// - A name appears at most once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuse/inode_table.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

inline constexpr size_t kMaxNameLength = 255;
// S3's longest key in bytes: no object has a longer one.
inline constexpr size_t kMaxKeyLength = 1024;

// True when `name` can be a directory entry (see the rules above).
bool IsValidName(std::string_view name);

struct ListedEntry {
  std::string name;
  Kind kind = Kind::kFile;
  ObjectAttrs attrs;  // files only
};

class DirListing {
 public:
  // `prefix`: the directory's key prefix ("" or ending in "/").
  explicit DirListing(std::string prefix) : prefix_(std::move(prefix)) {}

  // Adds one page of a LIST sent at `asked` (its files' attrs.fetched);
  // entries that became certain are appended to entries().
  void AddPage(const s3::ListObjectsV2Result& page, std::chrono::steady_clock::time_point asked);
  // Adds an entry from outside S3 (a local directory, a file being written)
  // unless the name is already taken.
  void AddLocal(ListedEntry entry);
  // Takes a whole listing that already obeys the rules (a cached one).
  // REQUIRES: nothing added yet.
  void AddComplete(std::vector<ListedEntry> entries);

  const std::vector<ListedEntry>& entries() const { return entries_; }
  bool Contains(const std::string& name) const {
    IndexNames();
    return names_.count(name) != 0;
  }

 private:
  void Emit(ListedEntry entry);

  std::string prefix_;
  std::vector<ListedEntry> entries_;
  // Names of entries_[0, indexed_): built lazily, so a cached listing that
  // is only read never pays for the set.
  void IndexNames() const;
  mutable std::set<std::string> names_;
  mutable size_t indexed_ = 0;
};

// Every entry of directory `dir_key` (delimiter listing, pages of
// `page_size`), or why there is none: a failed request's error; "Incomplete"
// (a truncated page without a continuation token); "TooLarge" (more than
// `max_keys` keys); "Stopped" (`stop` said so before a page).
Result<std::vector<ListedEntry>> ListWholeDirectory(s3::ObjectClient& client,
                                                    const std::string& bucket,
                                                    const std::string& dir_key, int page_size,
                                                    size_t max_keys = SIZE_MAX,
                                                    const std::function<bool()>& stop = nullptr);

}  // namespace bucketfs::fs
