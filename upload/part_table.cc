// PartTable: see part_table.h.
#include "upload/part_table.h"

namespace bucketfs::upload {

PartTable::Part& PartTable::At(int i) {
  if (static_cast<size_t>(i) >= parts_.size()) parts_.resize(i + 1);
  return parts_[i];
}

const PartTable::Part* PartTable::Find(int i) const {
  return static_cast<size_t>(i) < parts_.size() ? &parts_[i] : nullptr;
}

void PartTable::Touch(int i) {
  Part& p = At(i);
  ++p.gen;
  p.touched = true;
  if (!p.in_flight) pending_.insert(i);
}

bool PartTable::Untouched(int i) const {
  const Part* p = Find(i);
  return p == nullptr || !p->touched;
}

bool PartTable::ExtendsPrefix(int i, uint64_t start, uint64_t lo, uint64_t hi, uint64_t base_end) {
  Part& p = At(i);
  if (p.materialized) return true;
  if (lo != start + p.prefix) return false;
  p.prefix = hi - start;
  if (hi >= base_end) p.materialized = true;  // every base byte overwritten
  return true;
}

std::optional<uint64_t> PartTable::Materialize(int i, uint64_t start) {
  Part& p = At(i);
  if (p.materialized) return std::nullopt;
  p.materialized = true;
  return start + p.prefix;
}

std::optional<uint64_t> PartTable::BaseFrom(int i, uint64_t start) const {
  const Part* p = Find(i);
  if (p == nullptr) return start;
  if (p->materialized) return std::nullopt;
  return start + p->prefix;
}

PartTable::Ready PartTable::FirstReady(const std::function<bool(int)>& ready) const {
  Ready r;
  for (int i : pending_) {
    if (!ready(i)) break;
    if (r.next < 0) r.next = i;
    ++r.count;
  }
  return r;
}

bool PartTable::CleanBelow(int n) const { return pending_.empty() || *pending_.begin() >= n; }

uint64_t PartTable::StartSend(int i, bool staging) {
  Part& p = At(i);
  pending_.erase(i);
  p.in_flight = true;
  ++in_flight_;
  if (staging) {
    p.staging_pending = true;
    ++staging_writes_;
  }
  return p.gen;
}

void PartTable::SendDone(int i, uint64_t gen, const Result<s3::UploadPartResult>& r) {
  Part& p = At(i);
  p.in_flight = false;
  if (!r.ok()) {
    Fail(r.error());
  } else if (gen == p.gen) {
    p.has_etag = true;
    p.etag_gen = gen;
    p.etag = r->etag;
    p.crc32c = r->checksum_crc32c;
  }
  // Changed while it was on the wire (or failed): it goes again, same number.
  if (gen != p.gen || !r.ok()) pending_.insert(i);
  --in_flight_;
}

void PartTable::StagingDone(int i, bool cut) {
  Part& p = At(i);
  p.staging_pending = false;
  p.staging_cut = cut;
  --staging_writes_;
}

bool PartTable::StagingPending(int i) const {
  const Part* p = Find(i);
  return p != nullptr && p->staging_pending;
}

bool PartTable::StagingCut(int i) const {
  const Part* p = Find(i);
  return p != nullptr && p->staging_cut;
}

void PartTable::Copied(int i, const s3::UploadPartResult& r) {
  Part& p = At(i);
  p.has_etag = true;
  p.etag_gen = p.gen;
  p.etag = r.etag;
  p.crc32c = r.checksum_crc32c;  // Complete repeats it (CRC32C uploads)
}

void PartTable::ForgetUploads() {
  for (size_t i = 0; i < parts_.size(); ++i) {
    Part& p = parts_[i];
    p.has_etag = false;
    p.crc32c.clear();
    if (p.touched) pending_.insert(static_cast<int>(i));
  }
}

Result<std::vector<s3::CompletedPart>> PartTable::Completed(int n, const std::string& key) const {
  std::vector<s3::CompletedPart> done;
  for (int i = 0; i < n; ++i) {
    const Part* p = Find(i);
    if (p == nullptr || !p->has_etag || p->etag_gen != p->gen) {
      return MakeError(EIO, "PartMissing",
                       "part " + std::to_string(i + 1) + " of " + key + " was not uploaded");
    }
    done.push_back({i + 1, p->etag, p->crc32c});
  }
  return done;
}

void PartTable::Fail(const Error& e) {
  if (!first_error_) first_error_ = e;
}

}  // namespace bucketfs::upload
