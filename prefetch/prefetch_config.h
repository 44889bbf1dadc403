// PrefetchConfig: the read path's knobs, built once by the mount's
// composition root (MountPrefetchConfig) and then never changed. Defaults are
// the starting numbers of DESIGN.md ("Numbers we start from"); every one of
// them is meant to be measured and tuned. This header is the one place of the
// readahead policy: the knobs, their defaults, what a mount changes, and the
// kernel readahead they assume.
#pragma once

#include <cstdint>

namespace bucketfs::prefetch {

// The kernel readahead a page-cache mount asks for (FUSE INIT max_readahead
// and the mount's read_ahead_kb): sequential readers then get several 1 MiB
// READs in flight instead of one 128 KiB READ at a time.
inline constexpr uint32_t kKernelReadahead = 16u << 20;

struct PrefetchConfig {
  // --- Sequential streams
  uint64_t part_size = 8ull << 20;       // largest ranged GET of a sequential window
  uint64_t initial_window = 1ull << 20;  // first request of a stream
  // The window (a stream's bytes in flight) doubles up to this while reads
  // wait for their bytes; N
  // sequential streams get max_window / N each (at least two parts), and no
  // stream more than max_parts_in_flight parts.
  uint64_t max_window = 256ull << 20;
  int max_parts_in_flight = 16;  // per reader: concurrent ranged GETs of one stream
  // Past two parts, the window doubles only after a read had to wait for its
  // bytes. Off: it doubles every half window read, to its cap. Direct-I/O
  // mounts turn it off: their reader sends one READ at a time and the window
  // is its only readahead, so it seldom waits at the moment a read is planned
  // and its window would stay at two parts.
  bool grow_only_when_reads_wait = true;
  // A read this far beyond the prefetched frontier still continues the stream
  // (the gap is simply not fetched); further is a seek.
  uint64_t max_forward_skip = 64ull << 20;
  // A read this far behind the stream position keeps the stream, and parts
  // this far behind it are kept: the kernel issues readahead out of order
  // from several threads, late READs lag the furthest one by more than the
  // readahead, and posix_fadvise(SEQUENTIAL) doubles that readahead: four
  // times the mount's readahead covers both. A part every page of which was
  // read goes at once (ReadCoverage): only parts read partly are kept.
  uint64_t backward_tolerance = 4ull * kKernelReadahead;

  // --- Random access
  // Smallest ranged GET of a random read while random reads come near recent
  // ones; otherwise a read fetches only its pages (random_locality.h).
  uint64_t random_floor = 64ull << 10;
  int random_cache_blocks = 4;  // recent random blocks kept per file
  // Random blocks fetched on the reading thread itself (RangeSource::
  // FetchForCaller) at once, across all readers; 0: never. A mount gives
  // fewer than its FUSE threads, so that some stay free for other requests
  // while the rest wait on their GETs.
  int max_fetches_on_caller = 0;
  // Consecutive sequential requests after a seek that restart a stream.
  int sequential_trigger = 2;
  // A file read at random whose reads keep missing is fetched whole, in
  // parallel parts held until close, once its random fetches number as many
  // GETs as the whole object takes (size / part_size, at least
  // random_whole_min_fetches): by then the reader has paid for the whole
  // object in round trips, and every later read is served from memory (an
  // HDF5 or index file read row by row). Only objects up to random_whole_max
  // and a quarter of the budget; 0 turns it off.
  uint64_t random_whole_max = 1ull << 30;
  int random_whole_min_fetches = 16;

  // --- Small objects and file-level prefetch
  uint64_t small_object_threshold = 4ull << 20;  // smaller objects: one whole GET on first read
  double hint_budget_fraction = 0.125;           // share of the budget for files not yet open
  int max_hinted_files = 64;                     // files fetched ahead of their open

  // --- Memory
  uint64_t budget_bytes = 0;  // all prefetched data of the mount; 0 = DefaultBudgetBytes()
  // Freed part buffers kept for reuse (already faulted in), outside the budget.
  // Streams share max_window and release parts as soon as they were read, so
  // the buffers in use stay around max_window whatever the number of
  // streams; a pool of that size means steady readers never fault in (and
  // the kernel never zeroes) a new buffer.
  uint64_t buffer_pool_bytes = 256ull << 20;
};

// What a mount's options decide about its read path.
struct MountReadSettings {
  // Every open file bypasses the page cache: no kernel readahead, and the
  // READs of one descriptor come one at a time, in order.
  bool direct_io = false;
  uint64_t part_size = PrefetchConfig{}.part_size;
  uint64_t budget_bytes = 0;  // 0 = memory::MemoryBudget::DefaultBudgetBytes()
  int fuse_threads = 16;      // threads of the FUSE loop
  // Random blocks wanted on the FUSE thread that waits for them (0: never).
  int gets_on_fuse_threads = 0;
  // Largest object fetched whole once read at random (0: never).
  uint64_t random_whole_max = PrefetchConfig{}.random_whole_max;
};

// The PrefetchConfig of a mount: the defaults above, with what its settings
// change.
PrefetchConfig MountPrefetchConfig(const MountReadSettings& settings);

}  // namespace bucketfs::prefetch
