// Filesystem: mkdir, rmdir and rename of files (directory rename is in
// fs_rename_dir.cc, unlink in fs_unlink.cc).
#include <linux/fs.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>

#include "base/mutex.h"
#include "fuse/filesystem.h"
#include "s3/s3_limits.h"

namespace bucketfs::fs {
namespace {

constexpr uint64_t kCopyPartSize = 512ull << 20;  // UploadPartCopy part past it

Error Logged(const char* op, const std::string& bucket, const std::string& key, Error e) {
  spdlog::warn("{} s3://{}/{}: {}", op, bucket, key, e.ToString());
  return e;
}

}  // namespace

Result<Entry> Filesystem::Mkdir(Ino parent, const std::string& name) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  if (Status s = CheckWritable(*dir, name); !s.ok()) return s.error();
  const std::string key = dir->key + name + "/";
  if (config_.dir_markers) {
    s3::PutObjectParams p;
    p.bucket = dir->bucket;
    p.key = key;
    auto r = client_->PutObject(p, {});
    if (!r.ok()) return Logged("PutObject (marker)", p.bucket, p.key, r.error());
  } else {
    local_.AddDir(dir->bucket, key);
  }
  if (meta_) meta_->Changed(dir->bucket, key);
  names_.MadeDir(dir->bucket, dir->key, name);
  Ino ino = inodes_.Acquire(parent, name, Kind::kDir, dir->bucket, key, std::nullopt);
  return MakeEntry(ino, Kind::kDir, {});
}

Status Filesystem::Rmdir(Ino parent, const std::string& name) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  if (Status s = CheckWritable(*dir, name); !s.ok()) return s;
  const std::string key = dir->key + name + "/";
  if (local_.HasAnythingUnder(dir->bucket, key)) {
    return MakeError(ENOTEMPTY, "NotEmpty", key);
  }
  s3::ListObjectsV2Params p;
  p.bucket = dir->bucket;
  p.prefix = key;
  p.delimiter = '/';  // a char: g++ 12 reports a bogus -Wrestrict for "/" here
  p.max_keys = 16;
  auto r = client_->ListObjectsV2(p);
  if (!r.ok()) return Logged("ListObjectsV2", p.bucket, p.prefix, r.error());
  // A name this mount removed within the TTL is gone even where the store
  // still lists it (some stores answer a DELETE before their listing knows).
  const auto removed_here = [&](std::string_view listed) {
    std::string child(listed.substr(key.size()));
    if (!child.empty() && child.back() == '/') child.pop_back();
    auto hit = names_.Find(dir->bucket, key, child);
    return hit && hit->missing && !hit->from_listing;
  };
  bool marker = false;
  bool skipped = false;
  for (const auto& o : r->objects) {
    if (o.key == key) {
      marker = true;
    } else if (removed_here(o.key)) {
      skipped = true;
    } else {
      return MakeError(ENOTEMPTY, "NotEmpty", key);
    }
  }
  for (const std::string& prefix : r->common_prefixes) {
    if (!removed_here(prefix)) return MakeError(ENOTEMPTY, "NotEmpty", key);
    skipped = true;
  }
  if (skipped && r->is_truncated) return MakeError(ENOTEMPTY, "NotEmpty", key);
  const bool local = local_.HasDir(dir->bucket, key);
  if (!marker && !local) return MakeError(ENOENT, "NoSuchKey", key);
  if (marker) {
    // Removing an empty directory's marker loses no data: allowed without
    // allow_delete.
    Status s = client_->DeleteObject({dir->bucket, key});
    if (!s.ok()) return Logged("DeleteObject (marker)", dir->bucket, key, s.error());
  }
  local_.RemoveDir(dir->bucket, key);
  if (meta_) meta_->ChangedTree(dir->bucket, key);
  names_.ForgetTree(dir->bucket, key);
  names_.Removed(dir->bucket, dir->key, name);
  inodes_.Unlink(parent, name);
  return Status::Ok();
}

Result<ObjectAttrs> Filesystem::CopyObject(const std::string& src_bucket,
                                           const std::string& src_key,
                                           const std::string& dst_bucket,
                                           const std::string& dst_key,
                                           const std::optional<ObjectAttrs>& known) {
  // The source's size picks the copy method and its ETag pins the version
  // copied; attributes this mount knows fresh (it wrote or looked up the
  // file within the TTL) spare a HEAD.
  ObjectAttrs source;
  if (known && !known->etag.empty()) {
    source = *known;
  } else {
    s3::HeadObjectParams hp;
    hp.bucket = src_bucket;
    hp.key = src_key;
    const auto asked = std::chrono::steady_clock::now();
    auto head = client_->HeadObject(hp);
    if (!head.ok()) return Logged("HeadObject", src_bucket, src_key, head.error());
    source = FromHead(*head, asked);
  }
  const auto copied = [&](const std::string& etag) {
    // CopyObject copies the user metadata too: a link stays a link.
    return ObjectAttrs{source.size, std::chrono::system_clock::now(),
                       etag,        std::chrono::steady_clock::now(),
                       source.type, source.link_target};
  };
  if (source.size <= s3::kMaxCopyObjectSize) {
    s3::CopyObjectParams p;
    p.bucket = dst_bucket;
    p.key = dst_key;
    p.source_bucket = src_bucket;
    p.source_key = src_key;
    p.source_if_match = source.etag;
    auto r = client_->CopyObject(p);
    if (!r.ok()) return Logged("CopyObject", dst_bucket, dst_key, r.error());
    return copied(r->etag);
  }
  // Past 5 GiB: a multipart upload whose parts are ranges of the source.
  auto up = client_->CreateMultipartUpload({dst_bucket, dst_key, ""});
  if (!up.ok()) return Logged("CreateMultipartUpload", dst_bucket, dst_key, up.error());
  s3::CompleteMultipartUploadParams done;
  done.bucket = dst_bucket;
  done.key = dst_key;
  done.upload_id = up->upload_id;
  for (uint64_t offset = 0; offset < source.size; offset += kCopyPartSize) {
    s3::UploadPartCopyParams p;
    p.bucket = dst_bucket;
    p.key = dst_key;
    p.upload_id = up->upload_id;
    p.part_number = static_cast<int>(offset / kCopyPartSize) + 1;
    p.source_bucket = src_bucket;
    p.source_key = src_key;
    p.source_offset = offset;
    p.source_length = std::min(kCopyPartSize, source.size - offset);
    p.source_if_match = source.etag;
    auto r = client_->UploadPartCopy(p);
    if (!r.ok()) {
      Status ignored = client_->AbortMultipartUpload({dst_bucket, dst_key, up->upload_id});
      (void)ignored;
      return Logged("UploadPartCopy", dst_bucket, dst_key, r.error());
    }
    done.parts.push_back({p.part_number, r->etag});
  }
  auto r = client_->CompleteMultipartUpload(done);
  if (!r.ok()) {
    Status ignored = client_->AbortMultipartUpload({dst_bucket, dst_key, up->upload_id});
    (void)ignored;
    return Logged("CompleteMultipartUpload", dst_bucket, dst_key, r.error());
  }
  return copied(r->etag);
}

Status Filesystem::Rename(Ino parent, const std::string& name, Ino new_parent,
                          const std::string& new_name, unsigned flags) {
  if (flags & RENAME_EXCHANGE) return MakeError(EINVAL, "Exchange", "RENAME_EXCHANGE");
  auto src_dir = GetDir(parent);
  if (!src_dir.ok()) return src_dir.error();
  auto dst_dir = GetDir(new_parent);
  if (!dst_dir.ok()) return dst_dir.error();
  if (Status s = CheckWritable(*src_dir, name); !s.ok()) return s;
  if (Status s = CheckWritable(*dst_dir, new_name); !s.ok()) return s;
  WaitForUpload(dst_dir->bucket, dst_dir->key + new_name);
  auto src = Resolve(*src_dir, name);
  if (!src.ok()) return src.error();
  auto dst = Resolve(*dst_dir, new_name);
  if (!dst.ok() && dst.error().errno_value != ENOENT) return dst.error();
  const bool dst_exists = dst.ok();
  if (dst_exists && (flags & RENAME_NOREPLACE)) return MakeError(EEXIST, "Exists", new_name);
  if (src->kind == Kind::kDir) {
    if (dst_exists && dst->kind != Kind::kDir) return MakeError(ENOTDIR, "NotADirectory", new_name);
    return RenameDir(*src_dir, name, *src, *dst_dir, new_name, dst_exists);
  }
  if (dst_exists) {
    if (dst->kind == Kind::kDir) return MakeError(EISDIR, "IsADirectory", new_name);
    if (!config_.allow_overwrite) {
      return MakeError(EPERM, "Overwrite", "mount with --allow-overwrite to replace objects");
    }
  }
  const std::string dst_key = dst_dir->key + new_name;
  if (local_.FileAttrs(src->bucket, src->key)) {
    if (pending_) {  // closed, uploading in the background: moved there too
      if (auto moved = RenameUploading(*src, *src_dir, name, *dst_dir, new_name)) {
        if (moved->ok()) {
          inodes_.Rename(parent, name, new_parent, new_name, dst_dir->bucket, dst_key);
        }
        return *moved;
      }
      WaitForUpload(src->bucket, src->key);  // it ended meanwhile, or was renamed already
      src = Resolve(*src_dir, name);
      if (!src.ok()) return src.error();
    }
    if (local_.FileAttrs(src->bucket, src->key)) return MakeError(EBUSY, "Busy", src->key);
  }
  if (src->bucket == dst_dir->bucket && src->key == dst_key) return Status::Ok();
  auto copy = CopyObject(
      src->bucket, src->key, dst_dir->bucket, dst_key,
      FreshWithin(src->attrs, config_.metadata_ttl) ? std::optional(src->attrs) : std::nullopt);
  if (!copy.ok()) return copy.error();
  // The copy exists from here on: record it even if the delete fails.
  ReplacedObject(dst_dir->bucket, dst_key);
  names_.Wrote(dst_dir->bucket, dst_dir->key, new_name, *copy);
  if (meta_) meta_->Changed(dst_dir->bucket, dst_key);
  bool kept = false;  // descriptors open on the old name read on until their last close
  {
    MutexLock lock(handles_mu_);
    kept = KeepForOpenHandles(src->bucket, src->key);
  }
  if (!kept) {
    Status s = client_->DeleteObject({src->bucket, src->key});
    if (!s.ok()) return Logged("DeleteObject (rename source)", src->bucket, src->key, s.error());
  }
  names_.Removed(src->bucket, src_dir->key, name);
  if (meta_) meta_->Changed(src->bucket, src->key);
  inodes_.Rename(parent, name, new_parent, new_name, dst_dir->bucket, dst_key);
  // The copy has its own ETag (from CopyObject's answer, or none: then the
  // next open asks S3).
  if (auto moved = inodes_.Find(new_parent, new_name)) {
    inodes_.SetAttrs(*moved, copy->etag.empty() ? ObjectAttrs{} : *copy);
  }
  return Status::Ok();
}

}  // namespace bucketfs::fs
