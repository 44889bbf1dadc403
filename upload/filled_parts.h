// FilledParts: the parts of one StagedUpload (upload/staged_upload.h) that are
// filled in memory. Parts that a file's writes reach for the first time (at
// the part's start, for a part holding bytes of the object the file is built
// from; the first part only from a first write of 128 KiB or more at 0, see
// StagedUpload::CanFill) are assembled in a part buffer from the mount's
// PartBufferBudget (TakeFill) instead of the staging file: each write is
// copied straight into the buffer and, while writes come in order, summed
// (CRC32C) in the same pass (s3::CopyCrc32c), so the part is never read back
// before upload.
// When the part goes out, Take hands the buffer to the writer, which uploads
// it and meanwhile writes it to the staging file (StagingFile::WriteBuffered,
// O_DIRECT where possible) for writes that may seek back into it.
//
// Parts:
// - a Fill per part: its buffer, how far it holds data (a write past that end
//   leaves zeros, as the staging file would) and the running sum;
// - at most kMaxFills parts at once per writer.
//
// Invariants: every buffer taken is given back exactly once (by Take's
// caller, Spill, Release or the destructor). A part's sum is offered only
// when every byte of it was summed in order.
//
// Not thread-safe: the writer calls it under its mu_.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>

#include "cache/staging_file.h"
#include "memory/part_buffer_budget.h"
#include "upload/part_layout.h"

namespace bucketfs::upload {

class FilledParts {
 public:
  // Fill buffers one writer holds at once: the part it writes and the one
  // before, still settling (plus one for a write that straddles a boundary).
  static constexpr size_t kMaxFills = 3;

  // `crc32c`: parts carry a CRC32C, summed as they are written.
  FilledParts(std::shared_ptr<memory::PartBufferBudget> budget, bool crc32c)
      : budget_(std::move(budget)), crc32c_(crc32c) {}
  ~FilledParts() { Release(); }
  FilledParts(const FilledParts&) = delete;
  FilledParts& operator=(const FilledParts&) = delete;

  bool Has(int i) const { return fills_.contains(i); }
  // No other part may start filling.
  bool Full() const { return fills_.size() >= kMaxFills; }

  // Starts filling part `i`, `size` bytes long, with a buffer from the
  // budget; false when the budget has none to spare for fills.
  // REQUIRES: !Has(i).
  bool Start(int i, uint64_t size);

  // Copies `data` to `offset` bytes from the start of part `i`.
  // REQUIRES: Has(i); offset + data.size() within the part's size.
  void Write(int i, uint64_t offset, std::span<const std::byte> data);

  // Copies the bytes `offset` bytes from the start of part `i` into `dest`;
  // past what was written, zeros. REQUIRES: Has(i); within the part's size.
  void Read(int i, uint64_t offset, std::span<std::byte> dest) const;

  // Part `i` goes out as its first `len` bytes.
  struct Sent {
    memory::PartBuffer body;         // size `len`; no longer a fill (FillSent)
    std::optional<uint32_t> crc32c;  // when summed in order (CRC32C parts)
  };
  // Takes part `i`'s buffer out (zeroing a hole at its end); the caller
  // gives it back to the budget. REQUIRES: Has(i); len within the part.
  Sent Take(int i, uint64_t len);

  // Writes every part being filled to `staging` at its place in `layout`
  // and gives the buffers back; the first error (the rest are still freed).
  Status Spill(cache::StagingFile& staging, const PartLayout& layout);
  // The same for part `i` alone. REQUIRES: Has(i).
  Status SpillPart(int i, cache::StagingFile& staging, const PartLayout& layout);

  // Gives every buffer back, the bytes unwritten (the file is dropped).
  void Release();

 private:
  struct Fill {
    memory::PartBuffer buf;
    uint64_t end = 0;    // bytes from the part's start that hold data (or zeros)
    uint32_t crc = 0;    // CRC32C of [0, end) while `summed`
    bool summed = true;  // every write so far came in order
  };

  const std::shared_ptr<memory::PartBufferBudget> budget_;
  const bool crc32c_;
  std::map<int, Fill> fills_;  // by part index
};

}  // namespace bucketfs::upload
