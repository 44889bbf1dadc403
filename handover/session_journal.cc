#include "handover/session_journal.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bucketfs::handover {
namespace {

constexpr uint64_t kMagic = 0x314e52554f4a4642ull;  // "BFJOURN1"
constexpr uint64_t kHeaderBytes = 4096;
// Compaction runs when the region exceeds this and four times the live set.
constexpr uint64_t kCompactFloor = 1ull << 20;

struct Header {
  uint64_t magic = kMagic;
  uint64_t region_start = kHeaderBytes;
};

Status WriteAll(int fd, const void* data, size_t n, uint64_t offset) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = w < 0 ? errno : EIO;
      return MakeError(err, "Journal",
                       std::string("cannot write the session journal: ") + strerror(err));
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::Ok();
}

uint64_t PageUp(uint64_t n) { return (n + kHeaderBytes - 1) / kHeaderBytes * kHeaderBytes; }

// Replays the region into `state`; returns where the intact records end.
uint64_t Replay(std::span<const std::byte> region, SessionState* state) {
  size_t at = 0;
  while (at < region.size()) {
    size_t used = 0;
    auto rec = DecodeRecord(region.subspan(at), &used);
    if (!rec) break;
    switch (rec->type) {
      case RecordType::kInit:
        state->init_request = std::move(rec->init);
        break;
      case RecordType::kNode:
        state->nodes[rec->node.ino] = std::move(rec->node);
        break;
      case RecordType::kNodeDrop:
        state->nodes.erase(rec->node.ino);
        break;
      case RecordType::kOpen:
        state->handles[rec->handle.fh] = std::move(rec->handle);
        break;
      case RecordType::kClose:
        state->handles.erase(rec->handle.fh);
        break;
    }
    at += used;
  }
  return at;
}

struct ReadResult {
  SessionState state;
  uint64_t region_start = 0;
  uint64_t tail = 0;
};

Result<ReadResult> ReadJournal(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return MakeError(errno, "Journal",
                     std::string("cannot stat the session journal: ") + strerror(errno));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  Header h;
  if (size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != static_cast<ssize_t>(sizeof(h)) ||
      h.magic != kMagic || h.region_start < kHeaderBytes || h.region_start > size) {
    return MakeError(EINVAL, "Journal", "the handed-over descriptor is not a session journal");
  }
  std::vector<std::byte> region(size - h.region_start);
  size_t got = 0;
  while (got < region.size()) {
    const ssize_t r = pread(fd, region.data() + got, region.size() - got,
                            static_cast<off_t>(h.region_start + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return MakeError(EIO, "Journal", "cannot read the session journal");
    got += static_cast<size_t>(r);
  }
  ReadResult out;
  out.region_start = h.region_start;
  out.tail = h.region_start + Replay(region, &out.state);
  return out;
}

}  // namespace

Result<std::unique_ptr<SessionJournal>> SessionJournal::Create() {
  const int fd = memfd_create("bucketfs-session", MFD_CLOEXEC);
  if (fd < 0) {
    return MakeError(errno, "Journal", std::string("memfd_create: ") + strerror(errno));
  }
  Header h;
  if (Status s = WriteAll(fd, &h, sizeof(h), 0); !s.ok()) {
    close(fd);
    return s.error();
  }
  return std::unique_ptr<SessionJournal>(
      new SessionJournal(fd, kHeaderBytes, kHeaderBytes, SessionState{}));
}

Result<SessionState> SessionJournal::Read(int fd) {
  auto r = ReadJournal(fd);
  if (!r.ok()) return r.error();
  return std::move(r->state);
}

Result<std::unique_ptr<SessionJournal>> SessionJournal::Adopt(int fd, SessionState* state) {
  auto r = ReadJournal(fd);
  if (!r.ok()) {
    close(fd);
    return r.error();
  }
  *state = r->state;
  return std::unique_ptr<SessionJournal>(
      new SessionJournal(fd, r->region_start, r->tail, std::move(r->state)));
}

SessionJournal::SessionJournal(int fd, uint64_t region_start, uint64_t tail, SessionState state)
    : fd_(fd), region_start_(region_start), tail_(tail) {
  MutexLock lock(mu_);
  if (!state.init_request.empty()) init_ = EncodeInit(state.init_request);
  live_bytes_ = init_.size();
  for (const auto& [ino, node] : state.nodes) {
    auto& rec = nodes_[ino] = EncodeNode(node);
    live_bytes_ += rec.size();
  }
  for (const auto& [fh, handle] : state.handles) {
    auto& rec = handles_[fh] = EncodeOpen(handle);
    live_bytes_ += rec.size();
  }
  // A record cut by a crash ends the region: cut it off so appends follow
  // the last whole record.
  if (ftruncate(fd_, static_cast<off_t>(tail_)) != 0) healthy_ = false;
}

SessionJournal::~SessionJournal() { close(fd_); }

void SessionJournal::Append(std::vector<std::byte> record) {
  if (Status s = WriteAll(fd_, record.data(), record.size(), tail_); !s.ok()) {
    healthy_ = false;
    return;
  }
  tail_ += record.size();
  CompactIfWorthIt();
}

void SessionJournal::CompactIfWorthIt() {
  const uint64_t region = tail_ - region_start_;
  if (region < kCompactFloor || region < 4 * live_bytes_) return;
  const uint64_t start = PageUp(tail_);
  std::vector<std::byte> live;
  live.reserve(live_bytes_);
  auto add = [&live](const std::vector<std::byte>& rec) {
    live.insert(live.end(), rec.begin(), rec.end());
  };
  add(init_);
  for (const auto& [ino, rec] : nodes_) add(rec);
  for (const auto& [fh, rec] : handles_) add(rec);
  if (!WriteAll(fd_, live.data(), live.size(), start).ok()) {
    healthy_ = false;
    return;
  }
  // One 16-byte write switches readers to the new region.
  Header h;
  h.region_start = start;
  if (!WriteAll(fd_, &h, sizeof(h), 0).ok()) {
    healthy_ = false;
    return;
  }
  const uint64_t old_start = region_start_;
  region_start_ = start;
  tail_ = start + live.size();
  // Offsets keep growing; the pages behind them go back to the kernel.
  fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(old_start),
            static_cast<off_t>(start - old_start));
}

void SessionJournal::RecordInit(std::span<const std::byte> request) {
  MutexLock lock(mu_);
  live_bytes_ -= init_.size();
  init_ = EncodeInit(request);
  live_bytes_ += init_.size();
  Append(init_);
}

void SessionJournal::NodeChanged(const NodeRecord& node) {
  MutexLock lock(mu_);
  auto rec = EncodeNode(node);
  auto& slot = nodes_[node.ino];
  live_bytes_ = live_bytes_ - slot.size() + rec.size();
  slot = rec;
  Append(std::move(rec));
}

void SessionJournal::NodeDropped(uint64_t ino) {
  MutexLock lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return;
  live_bytes_ -= it->second.size();
  nodes_.erase(it);
  Append(EncodeNodeDrop(ino));
}

void SessionJournal::HandleOpened(const HandleRecord& handle) {
  MutexLock lock(mu_);
  auto rec = EncodeOpen(handle);
  auto& slot = handles_[handle.fh];
  live_bytes_ = live_bytes_ - slot.size() + rec.size();
  slot = rec;
  Append(std::move(rec));
}

void SessionJournal::HandleClosed(uint64_t fh) {
  MutexLock lock(mu_);
  auto it = handles_.find(fh);
  if (it == handles_.end()) return;
  live_bytes_ -= it->second.size();
  handles_.erase(it);
  Append(EncodeClose(fh));
}

uint64_t SessionJournal::region_bytes() const {
  MutexLock lock(mu_);
  return tail_ - region_start_;
}

bool SessionJournal::healthy() const {
  MutexLock lock(mu_);
  return healthy_;
}

}  // namespace bucketfs::handover
