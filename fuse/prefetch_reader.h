// Readers backed by the prefetcher (prefetch/): sequential streams with a
// growing window, random reads with a floor, small objects fetched whole,
// all within one memory budget per mount. Reads answer with the prefetch
// buffers themselves (ReadAsync), so the FUSE edge replies without a copy.
#pragma once

#include <memory>

#include "fuse/file_reader.h"
#include "prefetch/prefetcher.h"

namespace bucketfs::fs {

// REQUIRES: prefetcher != nullptr; it outlives every reader made.
std::shared_ptr<FileReaderFactory> MakePrefetchReaderFactory(
    std::shared_ptr<prefetch::Prefetcher> prefetcher);

}  // namespace bucketfs::fs
