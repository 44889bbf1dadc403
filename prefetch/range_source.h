// RangeSource: the only thing the read path needs from the outside world — a
// way to fetch a byte range of one object version, asynchronously, straight
// into a buffer the caller owns. The real one is ObjectClientRangeSource (a
// ranged GetObject with If-Match: etag); tests use testing/fake_range_source.h
// (in-process bytes, latency and failure knobs, a log of every fetch).
//
// Version safety: every fetch names the ETag seen at open. A source must fail
// the fetch (errno EIO) rather than return bytes of another version, so a
// reader never mixes two versions of an object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>

#include "s3/object_version.h"
#include "s3/result.h"

namespace bucketfs::prefetch {

using s3::ObjectVersion;

class RangeSource {
 public:
  virtual ~RangeSource() = default;

  // Fetches exactly [offset, offset + dest.size()) of `object` into `dest` and
  // then calls `done` exactly once, on any thread (possibly inline, before
  // FetchAsync returns). On error `dest` holds unspecified bytes.
  // REQUIRES: offset + dest.size() <= object.size
  // REQUIRES: `dest` stays valid until `done` has been called.
  virtual void FetchAsync(const ObjectVersion& object, uint64_t offset, std::span<std::byte> dest,
                          std::function<void(Status)> done) = 0;

  // The same, for bytes a read waits for on the calling thread anyway (a
  // random read's block): a source may fetch them on that thread, `done`
  // then called before this returns. By default FetchAsync.
  // REQUIRES: as FetchAsync, and the caller holds no lock `done` takes.
  virtual void FetchForCaller(const ObjectVersion& object, uint64_t offset,
                              std::span<std::byte> dest, std::function<void(Status)> done) {
    FetchAsync(object, offset, dest, std::move(done));
  }
};

}  // namespace bucketfs::prefetch
