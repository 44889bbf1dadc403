#include "tests/s3sim/body.h"

#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include "tests/s3sim/body_pool.h"

namespace s3sim {

Body::Body(std::string bytes) : Body(BodyPool::Default().Share(std::move(bytes))) {}

Body::Body(BufferPtr buffer) : Body(std::vector<BufferPtr>{std::move(buffer)}) {}

Body::Body(const std::vector<BufferPtr>& chunks) {
  for (const BufferPtr& c : chunks) {
    if (!c || c->empty()) continue;
    chunks_.push_back(c);
    starts_.push_back(size_);
    size_ += c->size();
  }
}

std::string_view Body::Piece(uint64_t offset) const {
  if (offset >= size_) return {};
  // The last chunk that begins at or before offset.
  size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                                 starts_.begin()) -
             1;
  return std::string_view(*chunks_[i]).substr(offset - starts_[i]);
}

std::string Body::Substr(uint64_t offset, uint64_t length) const {
  std::string out;
  if (offset >= size_) return out;
  length = std::min(length, size_ - offset);
  out.reserve(length);
  while (out.size() < length) {
    std::string_view p = Piece(offset + out.size());
    out.append(p.substr(0, length - out.size()));
  }
  return out;
}

std::string Body::Md5() const {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_md5(), nullptr);
  for (const BufferPtr& c : chunks_) EVP_DigestUpdate(ctx, c->data(), c->size());
  EVP_DigestFinal_ex(ctx, out, &len);
  EVP_MD_CTX_free(ctx);
  return std::string(reinterpret_cast<char*>(out), len);
}

bool operator==(const Body& body, std::string_view bytes) {
  if (body.size_ != bytes.size()) return false;
  for (size_t i = 0; i < body.chunks_.size(); ++i) {
    if (bytes.substr(body.starts_[i], body.chunks_[i]->size()) != *body.chunks_[i]) return false;
  }
  return true;
}

}  // namespace s3sim
