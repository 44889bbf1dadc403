// SubtreeLister: lists whole subtrees of sibling directories with flat
// ListObjectsV2 requests (no delimiter), so that a wide tree costs one
// request per 1000 keys instead of one request per directory, and fills the
// listing of every directory below at once.
//
// A range is a run of sibling subdirectories of one parent (sorted keys,
// each ending in "/") and the key where the next range begins. Listing starts
// just after the first subdirectory's name and stops at the next range. Keys
// of the parent that are not under a subdirectory of the range are skipped.
// From the flat keys it synthesizes, per directory, the page a delimiter
// listing would have returned and runs it through DirListing (same naming
// rules as readdir).
//
// Completeness: keys arrive sorted, so a directory is complete once a key
// past its whole prefix arrived (or the range ended); `sink` receives the
// listings completed by each page. At most `max_pages` requests are made: a
// wide range is never a crawl of a huge tree. Subdirectories of the range
// left incomplete are returned, for one delimiter listing each.
// Not thread-safe by itself (one call per range); no state between calls.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fuse/dir_listing.h"
#include "s3/object_client.h"

namespace bucketfs::fs {

struct SubtreeRange {
  std::string bucket;
  std::string parent;             // "" or ending in "/"
  std::vector<std::string> dirs;  // sorted subdirectory keys of `parent`
  std::string end;                // the next range's first key; "" = to the end of `parent`
};

using CompleteListings = std::vector<std::pair<std::string, std::vector<ListedEntry>>>;

// Returns the subdirectories of `range.dirs` not completed (request failed,
// page cap reached, stop() true). `stop` is polled between pages.
std::vector<std::string> ListSubtrees(s3::ObjectClient& client, const SubtreeRange& range,
                                      int page_size, int max_pages,
                                      const std::function<void(CompleteListings)>& sink,
                                      const std::function<bool()>& stop);

}  // namespace bucketfs::fs
