// ObjectReader: the read side of one open file, made by Prefetcher::Open.
//
// Reads may come concurrently from several FUSE threads, in any order (the
// kernel issues readahead out of order). ReadFromParts never blocks: `done`
// runs inline when the bytes are already in memory, else on the thread that
// completes the last fetch they need. The answer points into the prefetch
// buffers (ReadData pins them), so the FUSE edge replies without a copy:
//
//   reader->ReadFromParts(off, size, [req](Result<ReadData> r) {
//     if (!r.ok()) { fuse_reply_err(req, r.error().errno_value); return; }
//     std::vector<iovec> iov;  // one entry per r->segments()
//     ...
//     fuse_reply_iov(req, iov.data(), iov.size());
//   });  // the ReadData (and the buffers) are released after the reply returns
//
// Reads at or past the end of the object return empty data; reads crossing it
// are cut short. Errors carry their errno (EIO when the object changed since
// open: every fetch carries If-Match with the ETag seen at open).
//
// Three modes:
//  - whole:      objects below small_object_threshold are fetched in one GET on
//                first read (or adopted from a file-level hint) and served from
//                that one part until close (object_reader.cc).
//  - sequential: a stream of parts [.., frontier_) ahead of the reader
//                (object_reader_stream.cc). The window (the stream's bytes in
//                flight) starts at initial_window and doubles on every read
//                that waits for its bytes and on every completion after one
//                did (otherwise at most once per half window read, past two
//                parts only when grow_only_when_reads_wait is off), up to
//                max_window / active streams (at least two parts), as far as
//                the budget allows; parts are min(part_size, window) long, at
//                most max_parts_in_flight are in flight, and parts done but not
//                yet read may add a quarter window ahead of the furthest read
//                end (a part that arrives early frees its slot at once). Reads
//                inside [stream_pos - backward_tolerance, frontier +
//                max_forward_skip] keep the stream (a single read outside is
//                served on the side; two in a row are a seek; so are two
//                sequential reads behind the stream in bytes it never had,
//                after a lone read ahead of it); a part is
//                released once every page of it was read (ReadCoverage), else
//                once it ends more than backward_tolerance behind the stream
//                position, except the last one (late out-of-order READs still
//                find theirs). Each stream keeps at most its fair share of the
//                budget (limit / active streams, minus one part) scheduled ahead.
//                After a seek the new stream starts with the window the last
//                one reached, up to the length of its run. Parts a stream
//                leaves (skipped, behind, or at a seek) before every page was
//                read are kept (object_reader_kept.cc, oldest dropped past the
//                stream's share of the budget, when a new part needs its
//                budget, or when the buffer pool has no spare buffer for it);
//                a later stream or random read uses them instead of
//                fetching, and a stream skips bytes already read.
//  - random:     after a seek (object_reader_random.cc). Each read is served by
//                one block of at least random_floor bytes (aligned when the
//                read fits in one aligned block) while reads land near recent
//                ones, else by its pages alone (RandomLocality); the last
//                random_cache_blocks blocks are kept. Runs of
//                sequential_trigger consecutive requests restart a stream.
//                A reader whose random reads keep fetching holds the whole
//                object once they number as many GETs as it takes
//                (object_reader_held.cc, PrefetchConfig::random_whole_max):
//                a HeldObject shared by every reader of that version, whose
//                parts serve any read they cover, in every mode.
//
// Invariants: parts in seq_parts_ never overlap; a range is never fetched twice
// while a part for it is held or in flight (reads wait on the existing part);
// a failed part is dropped at once, so the next read that needs it fetches it
// again. Locks: mu_ only; it is never held while calling the source or a read
// callback, or while completing a part. Fetches in flight do not keep the
// reader alive: dropping the last reference closes it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "prefetch/consumed_ranges.h"
#include "prefetch/fetch_context.h"
#include "prefetch/held_object.h"
#include "prefetch/part.h"
#include "prefetch/random_locality.h"
#include "prefetch/range_source.h"
#include "s3/result.h"

namespace bucketfs::prefetch {

using ReadCallback = std::function<void(Result<ReadData>)>;

struct ReaderStats {
  uint64_t fetches = 0;        // fetches started by this reader
  uint64_t bytes_fetched = 0;  // bytes they asked for
  uint64_t window = 0;         // current sequential window
  bool sequential = false;     // a sequential stream is active
  uint64_t seeks = 0;          // streams abandoned by a seek
  uint64_t stream_starts = 0;  // streams started (first read at 0, re-detection)
  uint64_t kept_reused = 0;    // parts a stream had left unread, used later instead of a fetch
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
  // The reader came to hold the whole object for its random reads (its
  // parts' fetches belong to the held object, not to `fetches`).
  bool holds_whole = false;
};

class ObjectReader : public std::enable_shared_from_this<ObjectReader> {
 public:
  // `adopted_whole` (may be null): a whole-object part fetched ahead of open.
  ObjectReader(std::shared_ptr<const internal::FetchContext> ctx, ObjectVersion object,
               PartPtr adopted_whole);
  ~ObjectReader();  // Close()
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  // Reads up to `size` bytes at `offset` from the parts that hold them,
  // fetching those not yet held or in flight. Thread-safe.
  void ReadFromParts(uint64_t offset, uint64_t size, ReadCallback done);

  // Blocking form: copies into `out`, returns the byte count (short at EOF).
  Result<size_t> Read(uint64_t offset, std::span<std::byte> out);

  // Releases every buffer the reader holds at once (buffers still pinned by a
  // reply in progress go when that reply drops them; parts in flight when
  // their fetch ends). Later reads fail with EBADF. Idempotent.
  void Close();

  const ObjectVersion& object() const { return object_; }
  ReaderStats stats() const;

 private:
  enum class Mode { kWhole, kSequential, kRandom };
  // Consecutive requests outside the stream's tolerance that make a seek: a
  // single one is served on the side and keeps the stream.
  static constexpr int kSeekAfterOutsideReads = 2;
  struct Plan {
    std::vector<PartPtr> needed;    // parts covering the read, in offset order
    std::vector<PartPtr> to_fetch;  // new parts to start once mu_ is released
    // to_fetch is one random block this read waits for: it may be fetched
    // on the reading thread (FetchContext::on_caller).
    bool for_caller = false;
    // The held object whose fill to resume once mu_ is released.
    std::shared_ptr<internal::HeldObject> fill;
  };

  // Planning and the stream (under mu_).
  void PlanWhole(Plan& plan) REQUIRES(mu_);
  void PlanRandom(uint64_t o, uint64_t e, Plan& plan) REQUIRES(mu_);
  void PlanSequential(uint64_t o, uint64_t e, Plan& plan) REQUIRES(mu_);
  void PlanStreamRead(uint64_t o, uint64_t e, Plan& plan) REQUIRES(mu_);
  void PlanBlock(uint64_t o, uint64_t e, Plan& plan) REQUIRES(mu_);
  void StartStream(uint64_t from) REQUIRES(mu_);
  // A seek: the stream's parts are kept, the next stream's window noted.
  void DropStreamAtSeek() REQUIRES(mu_);
  void LeaveStream() REQUIRES(mu_);  // sequential -> random or closed
  void ReleaseBehind() REQUIRES(mu_);
  // Drops from the stream the parts every page of which has been read.
  void ReleaseConsumed(uint64_t o, uint64_t e, const std::vector<PartPtr>& needed) REQUIRES(mu_);
  uint64_t WindowCap() const REQUIRES(mu_);  // largest window for this stream now
  bool SeqCovers(uint64_t o, uint64_t e) const REQUIRES(mu_);
  void EnsureCovered(uint64_t o, uint64_t e, Plan& plan) REQUIRES(mu_);
  // `finishing`: a part whose fetch just ended (not yet marked done), or null.
  void FillWindow(std::vector<PartPtr>& to_fetch, const Part* finishing) REQUIRES(mu_);
  uint64_t SeqBytesInFlight(const Part* finishing) const
      REQUIRES(mu_);                // stream parts not yet done
  void GrowOnWait() REQUIRES(mu_);  // doubles the window, up to WindowCap()
  // A new part with its budget reserved; demand parts may force the budget,
  // others return null when it refuses.
  PartPtr NewPart(uint64_t offset, uint64_t len, bool demand) REQUIRES(mu_);
  uint64_t StreamPartLen() const REQUIRES(mu_);
  uint64_t AheadCap() const REQUIRES(mu_);       // fair share of the budget ahead of this stream
  uint64_t ActiveStreams() const REQUIRES(mu_);  // at least 1
  // Parts the stream left unread (object_reader_kept.cc). Keep: a part
  // dropped from the stream before every page of it was read; kept parts
  // past KeptCap() go, oldest first. Adopt: the kept part that holds `pos`
  // and lies within [from, to), taken out of the kept set, or null.
  void Keep(PartPtr p) REQUIRES(mu_);
  PartPtr AdoptKept(uint64_t pos, uint64_t from, uint64_t to) REQUIRES(mu_);
  // The start of the first kept part at or after pos (object size if none):
  // a new part stops there, so that the kept one can be adopted next.
  uint64_t NextKeptStart(uint64_t pos) const REQUIRES(mu_);
  // A kept part holding all of [o, e), left in the kept set, or null.
  PartPtr KeptCovering(uint64_t o, uint64_t e) const REQUIRES(mu_);
  bool DropOldestKept() REQUIRES(mu_);
  uint64_t KeptCap() const REQUIRES(mu_);
  // The whole object held for random readers (object_reader_held.cc).
  // PlanHeld: true when held parts cover [o, e) (they are then `needed`).
  bool PlanHeld(uint64_t o, uint64_t e, Plan& plan) REQUIRES(mu_);
  // Called for each fetch of a random read: holds the object once they are
  // as many as the whole object's GETs.
  void NoteRandomFetch(Plan& plan) REQUIRES(mu_);
  // Counts `fetched` as a re-read fetch when the read [o, e) asks again for
  // bytes of a consumed range.
  void NoteRereadFetch(uint64_t o, uint64_t e, const PartPtr& fetched) REQUIRES(mu_);

  // Without mu_.
  void Issue(std::vector<PartPtr>& to_fetch, bool for_caller = false) EXCLUDES(mu_);
  void OnFetchDone(const PartPtr& part, Status s) EXCLUDES(mu_);
  static void Serve(std::vector<PartPtr> needed, uint64_t o, uint64_t e, ReadCallback done);

  const std::shared_ptr<const internal::FetchContext> ctx_;
  const PrefetchConfig& cfg_;  // ctx_->config
  const ObjectVersion object_;

  mutable Mutex mu_;
  bool closed_ GUARDED_BY(mu_) = false;
  Mode mode_ GUARDED_BY(mu_);
  PartPtr whole_ GUARDED_BY(mu_);  // kWhole only
  // Sequential stream.
  PartsByOffset seq_parts_ GUARDED_BY(mu_);   // by offset, non-overlapping
  uint64_t stream_from_ GUARDED_BY(mu_) = 0;  // where the stream started
  uint64_t stream_pos_ GUARDED_BY(mu_) = 0;   // furthest read start of the stream
  uint64_t read_end_ GUARDED_BY(mu_) = 0;     // furthest read end of the stream
  uint64_t frontier_ GUARDED_BY(mu_) = 0;     // end of the highest part scheduled
  uint64_t window_ GUARDED_BY(mu_) = 0;
  // The window the next stream starts with: what the reader's last stream
  // showed it reads in one run (see PlanSequential's seek).
  uint64_t resume_window_ GUARDED_BY(mu_) = 0;
  uint64_t next_grow_ GUARDED_BY(mu_) = 0;  // stream_pos_ at which the window may double next
  bool starved_ GUARDED_BY(mu_) = false;  // a read waited for its bytes since the window last grew
  // Parts the stream fetched and left before every page of them was read
  // (skipped over, or dropped at a seek), by offset, non-overlapping, with
  // the order they were kept in: a reader that jumps back to them (the
  // records of a checkpoint read out of file order) takes them from here
  // instead of fetching them again.
  struct KeptPart {
    PartPtr part;
    uint64_t order = 0;
  };
  std::map<uint64_t, KeptPart> kept_ GUARDED_BY(mu_);
  uint64_t kept_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t kept_count_ GUARDED_BY(mu_) = 0;  // parts kept so far: the next order
  // Random access.
  std::deque<PartPtr> blocks_ GUARDED_BY(mu_);  // most recent first
  bool any_read_ GUARDED_BY(mu_) = false;
  uint64_t last_end_ GUARDED_BY(mu_) = 0;  // end of the previous request
  int run_ GUARDED_BY(mu_) = 0;            // consecutive sequential requests seen in random mode
  int outside_ GUARDED_BY(mu_) = 0;
  // Consecutive sequential requests behind the stream, in parts already gone.
  int behind_run_ GUARDED_BY(mu_) = 0;  // consecutive requests outside the stream (sequential mode)
  int in_flight_ GUARDED_BY(mu_) = 0;   // fetches of this reader not yet done
  ReaderStats stats_ GUARDED_BY(mu_);
  internal::ConsumedRanges consumed_ GUARDED_BY(mu_);
  // The whole object, held for random readers (shared with other readers
  // of this version); null until then.
  std::shared_ptr<internal::HeldObject> held_ GUARDED_BY(mu_);
  uint64_t random_fetches_ GUARDED_BY(mu_) = 0;  // fetches of random reads so far
  RandomLocality locality_ GUARDED_BY(mu_);      // sizes random fetches
};

}  // namespace bucketfs::prefetch
