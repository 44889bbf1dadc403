// An object's bytes: one or more immutable, shared buffers read as one
// sequence. A completed multipart upload keeps its parts' buffers as its
// chunks instead of copying them into a new buffer the size of the object:
// the copy zero-filled and wrote 1 GiB per 1 GiB object, seconds on memory
// the VM had handed back to its host, and doubled the server's peak memory.
#ifndef TESTS_S3SIM_BODY_H_
#define TESTS_S3SIM_BODY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace s3sim {

using BufferPtr = std::shared_ptr<const std::string>;

class Body {
 public:
  Body() = default;
  explicit Body(std::string bytes);
  explicit Body(BufferPtr buffer);
  // Empty buffers are skipped.
  explicit Body(const std::vector<BufferPtr>& chunks);

  uint64_t size() const { return size_; }
  size_t chunk_count() const { return chunks_.size(); }
  // The contiguous bytes from offset to the end of the chunk holding it
  // (empty at or past the end).
  std::string_view Piece(uint64_t offset) const;
  // A copy of [offset, offset + length), clamped to the end.
  std::string Substr(uint64_t offset, uint64_t length) const;
  std::string Str() const { return Substr(0, size_); }
  // MD5 of all the bytes (raw 16 bytes), without joining the chunks.
  std::string Md5() const;

  friend bool operator==(const Body& body, std::string_view bytes);

 private:
  std::vector<BufferPtr> chunks_;
  std::vector<uint64_t> starts_;  // chunks_[i] begins at starts_[i]
  uint64_t size_ = 0;
};

using DataPtr = std::shared_ptr<const Body>;

}  // namespace s3sim

#endif  // TESTS_S3SIM_BODY_H_
