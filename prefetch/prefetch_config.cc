#include "prefetch/prefetch_config.h"

#include <algorithm>

namespace bucketfs::prefetch {

PrefetchConfig MountPrefetchConfig(const MountReadSettings& settings) {
  PrefetchConfig pc;
  pc.part_size = settings.part_size;
  pc.budget_bytes = settings.budget_bytes;
  pc.random_whole_max = settings.random_whole_max;
  // A loader's announced read order (fuse/read_order.h) holds 64 files ahead
  // of the furthest open and up to 64 behind it that parallel workers have
  // not opened yet; its files must not crowd each other out.
  pc.max_hinted_files = 256;
  // Two FUSE threads stay free for other requests while the rest wait on
  // their GETs.
  pc.max_fetches_on_caller =
      std::clamp(settings.gets_on_fuse_threads, 0, std::max(0, settings.fuse_threads - 2));
  if (settings.direct_io) {
    // No late READ needs the parts behind the reader, and the window is the
    // reader's only readahead, so it grows without waiting for a read to wait.
    pc.backward_tolerance = 2 * pc.part_size;
    pc.grow_only_when_reads_wait = false;
  }
  return pc;
}

}  // namespace bucketfs::prefetch
