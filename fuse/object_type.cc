#include "fuse/object_type.h"

#include <charconv>
#include <string>

namespace bucketfs::fs {

ObjectType TypeFromMetadata(const s3::UserMetadata& metadata) {
  auto it = metadata.find("mode");
  if (it == metadata.end()) return ObjectType::kRegular;
  uint32_t mode = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mode);
  if (ec != std::errc() || end != v.data() + v.size()) return ObjectType::kRegular;
  return S_ISLNK(mode) ? ObjectType::kLink : ObjectType::kRegular;
}

ObjectType TypeFromListing(uint64_t size) {
  return size == 0 || size > kMaxLinkTargetSize ? ObjectType::kRegular : ObjectType::kUnknown;
}

s3::UserMetadata LinkMetadata(std::chrono::system_clock::time_point now) {
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return {{"mode", std::to_string(kLinkMode)}, {"mtime", std::to_string(seconds)}};
}

}  // namespace bucketfs::fs
