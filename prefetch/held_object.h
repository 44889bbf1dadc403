// HeldObject: a whole object held in memory for the readers that read it at
// random (ObjectReader, object_reader_held.cc): parts of part_size covering
// it, fetched max_parts_in_flight at a time within the budget and kept until
// the last reader lets go. HeldObjects keeps one per object version, so the
// workers of a data loader that each open the same HDF5 file share one copy
// and one set of GETs. Internal to prefetch/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "prefetch/fetch_context.h"
#include "prefetch/part.h"

namespace bucketfs::prefetch::internal {

class HeldObject : public std::enable_shared_from_this<HeldObject> {
 public:
  HeldObject(std::shared_ptr<const FetchContext> ctx, ObjectVersion object);
  HeldObject(const HeldObject&) = delete;
  HeldObject& operator=(const HeldObject&) = delete;

  // The parts covering [o, e) (done or in flight), in offset order; empty
  // when some byte of it is in no part yet (not scheduled, or its fetch failed).
  std::vector<PartPtr> Cover(uint64_t o, uint64_t e) const EXCLUDES(mu_);
  // Starts the next parts' fetches, as many as the in-flight cap and the
  // budget allow; a part the budget refused is tried again on a later call.
  // REQUIRES: no lock of the caller held (the source may complete inline).
  void Fill() EXCLUDES(mu_);

 private:
  void Finished(const PartPtr& part, bool ok) EXCLUDES(mu_);

  const std::shared_ptr<const FetchContext> ctx_;
  const ObjectVersion object_;
  mutable Mutex mu_;
  PartsByOffset parts_ GUARDED_BY(mu_);    // by offset; a failed part leaves a gap
  uint64_t frontier_ GUARDED_BY(mu_) = 0;  // [0, frontier_) scheduled
  int in_flight_ GUARDED_BY(mu_) = 0;
};

class HeldObjects {
 public:
  // The object held for another reader, or null.
  std::shared_ptr<HeldObject> Find(const ObjectVersion& object) EXCLUDES(mu_);
  // The object held for another reader, else a new one (not yet filling).
  std::shared_ptr<HeldObject> Get(const std::shared_ptr<const FetchContext>& ctx,
                                  const ObjectVersion& object) EXCLUDES(mu_);

 private:
  Mutex mu_;
  // Entries whose last holder has gone are replaced or swept on the next Get.
  std::map<std::string, std::weak_ptr<HeldObject>> objects_ GUARDED_BY(mu_);
};

}  // namespace bucketfs::prefetch::internal
