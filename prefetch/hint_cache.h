// HintCache: whole small objects fetched ahead of their open (file-level
// prefetch, see prefetcher.h). Internal to prefetch/.
//
// Entries are keyed by bucket, key and ETag, so a changed object never hands
// out old bytes. Bounded three ways: max_hinted_files entries, a share of the
// budget (hint_budget_fraction), and age — an entry not re-hinted or taken
// within 2 * max_hinted_files HintNextFiles calls is dropped (the reader went
// elsewhere). A failed fetch is dropped at once; Open then fetches normally.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "prefetch/fetch_context.h"

namespace bucketfs::prefetch::internal {

class HintCache : public std::enable_shared_from_this<HintCache> {
 public:
  explicit HintCache(std::shared_ptr<const FetchContext> ctx);

  void Hint(const std::vector<ObjectVersion>& next);
  // The hinted part for exactly this version (maybe still in flight), removed
  // from the cache; null when there is none.
  PartPtr Take(const ObjectVersion& object);
  void Clear();

  uint64_t hinted() const;
  uint64_t hits() const;
  uint64_t bytes() const;

 private:
  struct Entry {
    PartPtr part;
    uint64_t generation = 0;
  };
  void OnFetchDone(const std::string& key, const PartPtr& part, const Status& s);

  const std::shared_ptr<const FetchContext> ctx_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  uint64_t hinted_ GUARDED_BY(mu_) = 0;
  uint64_t hits_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::prefetch::internal
