// Readers backed by the prefetcher (prefetch/): sequential streams with a
// growing window, random reads with a floor, small objects fetched whole,
// all within one memory budget per mount. Reads answer with the prefetch
// buffers themselves (ReadSegments), so the FUSE edge replies without a copy.
#pragma once

#include <memory>

#include "fuse/file_reader.h"
#include "prefetch/prefetcher.h"

namespace bucketfs::fs {

// Reads that had to wait for a fetch are answered on one of `reply_threads`
// threads of the factory's own (0: on the transport thread that completed
// the fetch), so that transport threads go back to their sockets at once.
// Reads whose bytes are already there are answered on the calling thread.
// REQUIRES: prefetcher != nullptr; it outlives every reader made.
// `data_cache` (may be null): the cache the prefetcher's source fills, whose
// complete verified files are offered for passthrough (VerifiedCopy).
std::shared_ptr<FileReaderFactory> MakePrefetchReaderFactory(
    std::shared_ptr<prefetch::Prefetcher> prefetcher, int reply_threads = 0,
    std::shared_ptr<cache::DataCache> data_cache = nullptr);

}  // namespace bucketfs::fs
