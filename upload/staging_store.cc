// StagingStore: see staging_store.h.
#include "upload/staging_store.h"

#include <algorithm>

#include "s3/crc32c.h"

namespace bucketfs::upload {

Result<std::optional<uint32_t>> StagingStore::ReadSummed(uint64_t offset, std::span<std::byte> dest,
                                                         bool crc32c) {
  constexpr uint64_t kPiece = 256 << 10;
  uint32_t sum = 0;
  for (uint64_t off = 0; off < dest.size(); off += kPiece) {
    const auto piece = dest.subspan(off, std::min<uint64_t>(kPiece, dest.size() - off));
    if (Status s = file_->Read(offset + off, piece); !s.ok()) return s.error();
    if (crc32c) sum = s3::Crc32c(piece, sum);
  }
  file_->DropCached(offset, dest.size());
  if (!crc32c) return std::optional<uint32_t>();
  return std::optional<uint32_t>(sum);
}

StagingStore::Staged StagingStore::WritePieces(uint64_t offset, std::span<const std::byte> data,
                                               uint64_t piece) {
  piece = std::max<uint64_t>(piece, 1);
  Staged staged;
  for (uint64_t off = 0; off < data.size() && staged.status.ok(); off += piece) {
    if (cut()) {
      staged.cut = true;
      break;
    }
    staged.status = file_->WriteBuffered(
        offset + off, data.subspan(off, std::min<uint64_t>(piece, data.size() - off)));
  }
  // A piece that failed once the cut came is not an error: nothing will read
  // it (the upload's outcome stands, ENOSPC or not).
  if (!staged.status.ok() && cut()) {
    staged.unneeded = staged.status.error();
    staged.status = Status::Ok();
    staged.cut = true;
  }
  return staged;
}

void StagingStore::Release(std::shared_ptr<StagingStore> store, base::TaskRunner* closer) {
  store->Cut();
  store->file_->ReleaseSpace();
  if (closer == nullptr) return;  // the last reference closes it here
  closer->Post([last = std::move(store)] {});
}

}  // namespace bucketfs::upload
