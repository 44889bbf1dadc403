#include "fuse/object_type.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

namespace bucketfs::fs {

ObjectType TypeFromMetadata(const s3::UserMetadata& metadata) {
  auto it = metadata.find("mode");
  if (it == metadata.end()) return ObjectType::kRegular;
  uint32_t mode = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mode);
  if (ec != std::errc() || end != v.data() + v.size()) return ObjectType::kRegular;
  if (S_ISLNK(mode)) return ObjectType::kLink;
  if (IsSpecialMode(mode)) return ObjectType::kSpecial;
  return ObjectType::kRegular;
}

ObjectType TypeFromListing(uint64_t size) {
  return size == 0 || size > kMaxLinkTargetSize ? ObjectType::kRegular : ObjectType::kUnknown;
}

namespace {

std::optional<uint64_t> Number(const s3::UserMetadata& m, const char* name) {
  auto it = m.find(name);
  if (it == m.end()) return std::nullopt;
  uint64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

void ReadPosixMetadata(const s3::UserMetadata& metadata, ObjectAttrs& attrs) {
  attrs.metadata_known = true;
  if (auto v = Number(metadata, "mode"); v && *v <= 0177777) attrs.mode = static_cast<uint32_t>(*v);
  if (auto v = Number(metadata, "uid"); v && *v <= UINT32_MAX)
    attrs.uid = static_cast<uint32_t>(*v);
  if (auto v = Number(metadata, "gid"); v && *v <= UINT32_MAX)
    attrs.gid = static_cast<uint32_t>(*v);
  if (auto v = Number(metadata, "rdev")) attrs.rdev = *v;
  if (auto v = Number(metadata, "mtime"); v && *v < (1ull << 40)) {
    attrs.meta_mtime = std::chrono::system_clock::time_point(std::chrono::seconds(*v));
  }
}

void WritePosixMetadata(const ObjectAttrs& attrs, s3::UserMetadata& metadata) {
  if (attrs.mode) metadata["mode"] = std::to_string(*attrs.mode);
  if (attrs.uid) metadata["uid"] = std::to_string(*attrs.uid);
  if (attrs.gid) metadata["gid"] = std::to_string(*attrs.gid);
  if (attrs.type == ObjectType::kSpecial) metadata["rdev"] = std::to_string(attrs.rdev);
  if (attrs.meta_mtime) {
    metadata["mtime"] = std::to_string(
        std::chrono::duration_cast<std::chrono::seconds>(attrs.meta_mtime->time_since_epoch())
            .count());
  }
}

s3::UserMetadata LinkMetadata(std::chrono::system_clock::time_point now) {
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return {{"mode", std::to_string(kLinkMode)}, {"mtime", std::to_string(seconds)}};
}

bool IsSpecialMode(uint32_t mode) {
  return S_ISFIFO(mode) || S_ISCHR(mode) || S_ISBLK(mode) || S_ISSOCK(mode);
}

uint32_t TypeBits(const ObjectAttrs& attrs) {
  if (attrs.type == ObjectType::kLink) return S_IFLNK;
  if (attrs.type == ObjectType::kSpecial && attrs.mode) return *attrs.mode & S_IFMT;
  return S_IFREG;
}

}  // namespace bucketfs::fs
