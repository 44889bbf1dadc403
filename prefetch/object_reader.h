// ObjectReader: the read side of one open file, made by Prefetcher::Open.
//
// Reads may come concurrently from several FUSE threads, in any order (the
// kernel issues readahead out of order). ReadAsync never blocks: `done` runs
// inline when the bytes are already in memory, else on the thread that
// completes the last fetch they need. The answer points into the prefetch
// buffers (ReadData pins them), so the FUSE edge replies without a copy:
//
//   reader->ReadAsync(off, size, [req](Result<ReadData> r) {
//     if (!r.ok()) { fuse_reply_err(req, r.error().errno_value); return; }
//     std::vector<iovec> iov;  // one entry per r->segments()
//     ...
//     fuse_reply_iov(req, iov.data(), iov.size());
//   });  // the ReadData (and the buffers) are released after the reply returns
//
// Reads at or past the end of the object return empty data; reads crossing it
// are cut short. Errors carry their errno (EIO when the object changed since
// open: every fetch carries If-Match with the ETag seen at open).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "prefetch/part.h"
#include "prefetch/range_source.h"
#include "s3/result.h"

namespace bucketfs::prefetch {

namespace internal {
class ReaderCore;
}

using ReadCallback = std::function<void(Result<ReadData>)>;

struct ReaderStats {
  uint64_t fetches = 0;        // fetches started by this reader
  uint64_t bytes_fetched = 0;  // bytes they asked for
  uint64_t window = 0;         // current sequential window
  bool sequential = false;     // a sequential stream is active
  uint64_t seeks = 0;          // streams abandoned by a seek
  uint64_t stream_starts = 0;  // streams started (first read at 0, re-detection)
  uint64_t forced_bytes = 0;   // budget taken past its limit for demand reads (buffers held)
  uint64_t reads = 0;          // reads answered or pending
  uint64_t waited_reads = 0;   // reads that found a part they need still in flight
  // Reads that needed a fetch and ask again for pages of a part the stream
  // let go once every page of it was read (ReadCoverage): the kernel asks
  // again for pages it dropped or failed to fill, e.g. under memory pressure.
  // Their fetches (whole, even where they also cover bytes never read) are
  // counted here as well as in fetches: any other byte fetched twice means a
  // part went before a late first read needed it.
  uint64_t rereads = 0;
  uint64_t reread_bytes_fetched = 0;
};

class ObjectReader {
 public:
  explicit ObjectReader(std::shared_ptr<internal::ReaderCore> core);
  ~ObjectReader();  // Close()
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  // Reads up to `size` bytes at `offset`. Thread-safe.
  void ReadAsync(uint64_t offset, size_t size, ReadCallback done);

  // Blocking form: copies into `out`, returns the byte count (short at EOF).
  Result<size_t> Read(uint64_t offset, std::span<std::byte> out);

  // Releases every buffer the reader holds at once (buffers still pinned by a
  // reply in progress go when that reply drops them; parts in flight when
  // their fetch ends). Later reads fail with EBADF. Idempotent.
  void Close();

  const ObjectVersion& object() const;
  ReaderStats stats() const;

 private:
  std::shared_ptr<internal::ReaderCore> core_;
};

}  // namespace bucketfs::prefetch
