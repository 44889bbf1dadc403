// The state of each part of a StagedWriter (fuse/staged_writer.cc), and a
// part's buffer while it is on its way out.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "fuse/upload_budget.h"

namespace bucketfs::fs {

// Per part: what is staged vs. what S3 holds for that part number.
struct PartState {
  uint64_t gen = 0;           // bumped by every change of the part's bytes
  bool touched = false;       // written (or filled) since the writer started
  bool materialized = false;  // base bytes of this part are staged (or all overwritten)
  // Bytes from the part's start written in order before its base bytes were
  // fetched: a part rewritten from its start (fio or dd over an existing
  // file without O_TRUNC) never needs the old bytes, so the fetch waits
  // until a write leaves this run or the part must be read to be sent.
  uint64_t prefix = 0;
  bool in_flight = false;
  bool has_etag = false;  // `etag` holds the bytes of generation `etag_gen`
  uint64_t etag_gen = 0;
  std::string etag;
  std::string crc32c;            // sent with `etag`'s upload (kCrc32c uploads)
  bool staging_pending = false;  // filled in memory, being written to the staging file
  bool staging_cut = false;      // that write was cut short by Commit: not in the file
};

// A part on its way: the buffer is given back when both the upload and (for
// a part filled in memory) its staging write are done with it.
struct Sending {
  PartBuffer body;
  std::atomic<int> users{1};
};

}  // namespace bucketfs::fs
