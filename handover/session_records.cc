#include "handover/session_records.h"

#include <cstring>

namespace bucketfs::handover {
namespace {

constexpr size_t kHeader = 8;  // length + checksum

// FNV-1a: enough to tell a torn record from a whole one.
uint32_t Checksum(std::span<const std::byte> bytes) {
  uint32_t h = 2166136261u;
  for (std::byte b : bytes) {
    h ^= static_cast<uint8_t>(b);
    h *= 16777619u;
  }
  return h;
}

class Writer {
 public:
  explicit Writer(RecordType type) : out_(kHeader) { U8(static_cast<uint8_t>(type)); }
  void U8(uint8_t v) { out_.push_back(std::byte{v}); }
  void U32(uint32_t v) { Raw(&v, sizeof(v)); }
  void U64(uint64_t v) { Raw(&v, sizeof(v)); }
  void Bytes(std::span<const std::byte> b) {
    U32(static_cast<uint32_t>(b.size()));
    Raw(b.data(), b.size());
  }
  void Str(const std::string& s) { Bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  std::vector<std::byte> Finish() {
    const auto length = static_cast<uint32_t>(out_.size() - kHeader);
    const uint32_t sum = Checksum(std::span(out_).subspan(kHeader));
    std::memcpy(out_.data(), &length, sizeof(length));
    std::memcpy(out_.data() + sizeof(length), &sum, sizeof(sum));
    return std::move(out_);
  }

 private:
  void Raw(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::byte> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  bool U8(uint8_t* v) { return Raw(v, sizeof(*v)); }
  bool U32(uint32_t* v) { return Raw(v, sizeof(*v)); }
  bool U64(uint64_t* v) { return Raw(v, sizeof(*v)); }
  bool Bytes(std::vector<std::byte>* out) {
    uint32_t n = 0;
    if (!U32(&n) || n > in_.size()) return false;
    out->assign(in_.begin(), in_.begin() + n);
    in_ = in_.subspan(n);
    return true;
  }
  bool Str(std::string* out) {
    uint32_t n = 0;
    if (!U32(&n) || n > in_.size()) return false;
    out->assign(reinterpret_cast<const char*>(in_.data()), n);
    in_ = in_.subspan(n);
    return true;
  }
  bool done() const { return in_.empty(); }

 private:
  bool Raw(void* p, size_t n) {
    if (in_.size() < n) return false;
    std::memcpy(p, in_.data(), n);
    in_ = in_.subspan(n);
    return true;
  }
  std::span<const std::byte> in_;
};

}  // namespace

std::vector<std::byte> EncodeInit(std::span<const std::byte> request) {
  Writer w(RecordType::kInit);
  w.Bytes(request);
  return w.Finish();
}

std::vector<std::byte> EncodeNode(const NodeRecord& node) {
  Writer w(RecordType::kNode);
  w.U64(node.ino);
  w.U64(node.parent);
  w.U8(node.dir ? 1 : 0);
  w.Str(node.name);
  w.Str(node.bucket);
  w.Str(node.key);
  return w.Finish();
}

std::vector<std::byte> EncodeNodeDrop(uint64_t ino) {
  Writer w(RecordType::kNodeDrop);
  w.U64(ino);
  return w.Finish();
}

std::vector<std::byte> EncodeOpen(const HandleRecord& handle) {
  Writer w(RecordType::kOpen);
  w.U64(handle.fh);
  w.U64(handle.ino);
  w.U8(static_cast<uint8_t>(handle.kind));
  w.U64(handle.size);
  w.Str(handle.etag);
  return w.Finish();
}

std::vector<std::byte> EncodeClose(uint64_t fh) {
  Writer w(RecordType::kClose);
  w.U64(fh);
  return w.Finish();
}

std::optional<Record> DecodeRecord(std::span<const std::byte> bytes, size_t* used) {
  uint32_t length = 0;
  uint32_t sum = 0;
  if (bytes.size() < kHeader) return std::nullopt;
  std::memcpy(&length, bytes.data(), sizeof(length));
  std::memcpy(&sum, bytes.data() + sizeof(length), sizeof(sum));
  if (length == 0 || length > bytes.size() - kHeader) return std::nullopt;
  const auto body = bytes.subspan(kHeader, length);
  if (Checksum(body) != sum) return std::nullopt;
  Reader r(body);
  Record rec;
  uint8_t type = 0;
  if (!r.U8(&type)) return std::nullopt;
  rec.type = static_cast<RecordType>(type);
  bool ok = false;
  switch (rec.type) {
    case RecordType::kInit:
      ok = r.Bytes(&rec.init);
      break;
    case RecordType::kNode: {
      uint8_t dir = 0;
      ok = r.U64(&rec.node.ino) && r.U64(&rec.node.parent) && r.U8(&dir) && r.Str(&rec.node.name) &&
           r.Str(&rec.node.bucket) && r.Str(&rec.node.key);
      rec.node.dir = dir != 0;
      break;
    }
    case RecordType::kNodeDrop:
      ok = r.U64(&rec.node.ino);
      break;
    case RecordType::kOpen: {
      uint8_t kind = 0;
      ok = r.U64(&rec.handle.fh) && r.U64(&rec.handle.ino) && r.U8(&kind) &&
           r.U64(&rec.handle.size) && r.Str(&rec.handle.etag);
      rec.handle.kind = static_cast<HandleKind>(kind);
      ok = ok && kind >= 1 && kind <= 3;
      break;
    }
    case RecordType::kClose:
      ok = r.U64(&rec.handle.fh);
      break;
  }
  if (!ok || !r.done()) return std::nullopt;
  *used = kHeader + length;
  return rec;
}

}  // namespace bucketfs::handover
