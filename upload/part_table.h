// PartTable: the state of every part of one staged upload (StagedUpload),
// and the rules that move a part between states. Pure: no threads, no files,
// no S3; the owner holds the lock that guards it and does the I/O.
//
// A part's life: Touch (a write changed it) puts it in the pending set with a
// new generation. StartSend takes it out and marks it in flight; SendDone
// records the upload's ETag when the part has not changed since (same
// generation), and puts the part back in the pending set when it has changed
// or the upload failed, so the last ETag kept is that of the last bytes. A
// part copied from the base object (Copied) is clean without a send.
//
// Invariants: a part is in the pending set only when it is not in flight; a
// part is clean (has an ETag of its current generation) only when it is not
// pending; the first error is kept, later ones are dropped.
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "s3/object_client.h"
#include "s3/result.h"

namespace bucketfs::upload {

class PartTable {
 public:
  // Marks part `i` changed: a new generation, pending unless in flight (then
  // pending again when that upload ends).
  void Touch(int i);
  // Part `i` was neither written nor filled since the upload started.
  bool Untouched(int i) const;

  // Over a base object: a write of [lo, hi) in part `i` (which starts at
  // `start` and holds base bytes up to `base_end`) that needs no base bytes
  // fetched first: the part has them already (or has none), or the write
  // continues the in-order run from the part's start, which it then extends.
  bool ExtendsPrefix(int i, uint64_t start, uint64_t lo, uint64_t hi, uint64_t base_end);
  // Marks part `i`'s base bytes as staged. Returns where the bytes still to
  // fetch begin (past the in-order run from `start`), or nullopt when they
  // were staged already.
  std::optional<uint64_t> Materialize(int i, uint64_t start);
  // Where part `i`'s bytes stop being staged (or filled) and the base
  // object's begin: past its in-order run from `start`; nullopt once its
  // base bytes are staged. A read finds the part's current bytes this way.
  std::optional<uint64_t> BaseFrom(int i, uint64_t start) const;

  // The first pending part and how many pending parts follow it in order
  // while `ready` holds (from the lowest); next < 0: none is ready.
  struct Ready {
    int next = -1;
    size_t count = 0;
  };
  Ready FirstReady(const std::function<bool(int)>& ready) const;
  // No part below `n` is pending.
  bool CleanBelow(int n) const;

  // Part `i` leaves the pending set for an upload (and, with `staging`, a
  // staging write of its buffer); returns the generation it sends.
  uint64_t StartSend(int i, bool staging);
  // The upload of generation `gen` of part `i` ended with `r`.
  void SendDone(int i, uint64_t gen, const Result<s3::UploadPartResult>& r);
  // The staging write of part `i` ended; `cut`: before all of it was written.
  void StagingDone(int i, bool cut);
  bool StagingPending(int i) const;
  bool StagingCut(int i) const;
  // Part `i` was copied from the base object as it is now.
  void Copied(int i, const s3::UploadPartResult& r);
  // The upload was abandoned for a new one: no part has an ETag, and every
  // touched part is pending again.
  void ForgetUploads();
  // Parts 1..n for CompleteMultipartUpload; an error naming `key` when one is
  // not clean.
  Result<std::vector<s3::CompletedPart>> Completed(int n, const std::string& key) const;

  int in_flight() const { return in_flight_; }
  int staging_writes() const { return staging_writes_; }

  // Remembers the first error (the commit aborts and returns it).
  void Fail(const Error& e);
  const std::optional<Error>& first_error() const { return first_error_; }

 private:
  // Per part: what is staged vs. what S3 holds for that part number.
  struct Part {
    uint64_t gen = 0;           // bumped by every change of the part's bytes
    bool touched = false;       // written (or filled) since the upload started
    bool materialized = false;  // base bytes of this part are staged (or all overwritten)
    // Bytes from the part's start written in order before its base bytes
    // were fetched: a part rewritten from its start never needs the old
    // bytes, so the fetch waits until a write leaves this run or the part
    // must be read to be sent.
    uint64_t prefix = 0;
    bool in_flight = false;
    bool has_etag = false;  // `etag` holds the bytes of generation `etag_gen`
    uint64_t etag_gen = 0;
    std::string etag;
    std::string crc32c;            // sent with `etag`'s upload (kCrc32c uploads)
    bool staging_pending = false;  // filled in memory, being written to the staging file
    bool staging_cut = false;      // that write was cut short by Commit: not in the file
  };

  Part& At(int i);
  const Part* Find(int i) const;

  std::vector<Part> parts_;
  std::set<int> pending_;  // changed, not clean, not in flight
  int in_flight_ = 0;
  int staging_writes_ = 0;  // filled parts being written to the staging file
  std::optional<Error> first_error_;
};

}  // namespace bucketfs::upload
