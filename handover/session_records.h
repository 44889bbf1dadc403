// The records of a session journal and their byte encoding.
//
// A record is [u32 length of what follows][u32 checksum of the body][u8 type]
// [fields]; integers little-endian (the journal never leaves the machine),
// strings as u32 length + bytes. The checksum lets a reader stop at a record
// that a crash cut in half: everything before it is whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bucketfs::handover {

enum class RecordType : uint8_t {
  kInit = 1,      // the kernel's INIT request, as read from /dev/fuse
  kNode = 2,      // an inode number and what it stands for (latest wins)
  kNodeDrop = 3,  // the kernel forgot an inode
  kOpen = 4,      // a file or directory handle the kernel holds
  kClose = 5,     // the handle was released
};

enum class HandleKind : uint8_t { kRead = 1, kWrite = 2, kDir = 3 };

struct NodeRecord {
  uint64_t ino = 0;
  uint64_t parent = 0;
  bool dir = false;
  std::string name, bucket, key;
  bool operator==(const NodeRecord&) const = default;
};

struct HandleRecord {
  uint64_t fh = 0;
  uint64_t ino = 0;
  HandleKind kind = HandleKind::kRead;
  uint64_t size = 0;  // read handles: the object's size at open
  std::string etag;   // read handles: the version the open pinned
  bool operator==(const HandleRecord&) const = default;
};

// One decoded record: the type and the fields that type uses.
struct Record {
  RecordType type = RecordType::kInit;
  std::vector<std::byte> init;  // kInit
  NodeRecord node;              // kNode; kNodeDrop uses node.ino
  HandleRecord handle;          // kOpen; kClose uses handle.fh
};

std::vector<std::byte> EncodeInit(std::span<const std::byte> request);
std::vector<std::byte> EncodeNode(const NodeRecord& node);
std::vector<std::byte> EncodeNodeDrop(uint64_t ino);
std::vector<std::byte> EncodeOpen(const HandleRecord& handle);
std::vector<std::byte> EncodeClose(uint64_t fh);

// Decodes the record at the start of `bytes`; sets `used` to its length.
// nullopt when the bytes hold no whole, intact record (the end of the
// journal, or a record cut by a crash).
std::optional<Record> DecodeRecord(std::span<const std::byte> bytes, size_t* used);

}  // namespace bucketfs::handover
