// Filesystem: name resolution (lookup) and fresh attributes of files.
#include <spdlog/spdlog.h>

#include <future>
#include <memory>

#include "base/strings.h"
#include "fuse/filesystem.h"
#include "fuse/object_type.h"

namespace bucketfs::fs {
namespace {

// Keys in a listing fetched for lookups, beyond which it is not kept.
constexpr size_t kMaxLookupListing = 200000;

}  // namespace

ObjectAttrs Filesystem::FromHead(const s3::HeadObjectResult& h,
                                 std::chrono::steady_clock::time_point asked) {
  ObjectAttrs a{h.size, h.last_modified, h.etag, asked, TypeFromMetadata(h.metadata)};
  ReadPosixMetadata(h.metadata, a);
  return a;
}

bool Filesystem::IsBucketList(const InodeSnapshot& dir) const {
  return config_.bucket.empty() && dir.ino == kRootIno;
}

Result<InodeSnapshot> Filesystem::GetDir(Ino ino) const {
  auto in = inodes_.Get(ino);
  if (!in) return MakeError(ESTALE, "StaleInode", "inode was forgotten");
  if (in->kind != Kind::kDir) return MakeError(ENOTDIR, "NotADirectory", in->key);
  return *in;
}

Status Filesystem::CheckWritable(const InodeSnapshot& dir, const std::string& name) const {
  if (config_.read_only) return MakeError(EROFS, "ReadOnly", "read-only mount");
  if (name.size() > kMaxNameLength) return MakeError(ENAMETOOLONG, "NameTooLong", name);
  if (!IsValidName(name)) return MakeError(EINVAL, "InvalidName", name);
  if (!base::IsUtf8(name)) {
    return MakeError(EILSEQ, "InvalidName", "S3 keys are UTF-8; this name is not: " + name);
  }
  if (IsBucketList(dir)) {
    return MakeError(EPERM, "BucketList", "the root of an all-buckets mount only lists buckets");
  }
  return Status::Ok();
}

Result<Filesystem::Resolved> Filesystem::ResolveBucket(const std::string& name) {
  s3::ListObjectsV2Params p;
  p.bucket = name;
  p.delimiter = "/";
  p.max_keys = 1;
  auto r = client_->ListObjectsV2(p);
  if (!r.ok()) {
    if (r.error().errno_value != ENOENT) {
      spdlog::warn("ListObjectsV2 s3://{}/: {}", name, r.error().ToString());
    }
    return r.error();
  }
  return Resolved{Kind::kDir, name, "", {}};
}

Result<Filesystem::Resolved> Filesystem::Resolve(const InodeSnapshot& dir,
                                                 const std::string& name) {
  if (name.size() > kMaxNameLength) return MakeError(ENAMETOOLONG, "NameTooLong", name);
  if (!IsValidName(name)) return MakeError(ENOENT, "InvalidName", name);
  if (IsBucketList(dir)) return ResolveBucket(name);
  const std::string file_key = dir.key + name;
  const std::string dir_key = file_key + "/";
  if (auto local = local_.FileAttrs(dir.bucket, file_key)) {
    return Resolved{Kind::kFile, dir.bucket, file_key, *local};
  }
  if (local_.HasDir(dir.bucket, dir_key)) return Resolved{Kind::kDir, dir.bucket, dir_key, {}};
  if (IsUnlinked(dir.bucket, file_key)) return MakeError(ENOENT, "NoSuchKey", file_key);
  // Keys S3 cannot hold are absent without asking (a store answers such a
  // request with an error, not with "no such key").
  if (file_key.size() > kMaxKeyLength || !base::IsUtf8(name)) {
    return MakeError(ENOENT, "NoSuchKey", file_key);
  }
  if (auto hit = names_.Find(dir.bucket, dir.key, name)) {
    if (!hit->missing) {
      if (hit->kind == Kind::kDir) return Resolved{Kind::kDir, dir.bucket, dir_key, {}};
      if (TypeUnknown(hit->attrs)) return ResolveType(dir, name);
      return Resolved{Kind::kFile, dir.bucket, file_key, hit->attrs};
    }
    // A directory the kernel still holds that a listing leaves out is asked
    // about (some stores omit prefixes that hold only prefixes); any other
    // name a held listing lacks does not exist.
    if (!hit->from_listing || HeldKind(dir, name) != Kind::kDir) {
      return MakeError(ENOENT, "NoSuchKey", file_key);
    }
    return ResolveRemote(dir, name);
  }
  if (meta_) {
    if (auto hit = meta_->Find(dir.bucket, file_key)) {
      if (hit->missing) return MakeError(ENOENT, "NoSuchKey", file_key);
      if (hit->kind == Kind::kDir) return Resolved{Kind::kDir, dir.bucket, dir_key, {}};
      if (TypeUnknown(hit->attrs)) return ResolveType(dir, name);
      return Resolved{Kind::kFile, dir.bucket, file_key, hit->attrs};
    }
  }
  if (names_.ShouldList(dir.bucket, dir.key)) ListForLookups(dir.bucket, dir.key);
  return ResolveRemote(dir, name);
}

std::optional<Kind> Filesystem::HeldKind(const InodeSnapshot& dir, const std::string& name) const {
  const auto known = inodes_.Find(dir.ino, name);
  const auto in = known ? inodes_.Get(*known) : std::nullopt;
  if (!in) return std::nullopt;
  return in->kind;
}

Result<Filesystem::Resolved> Filesystem::ResolveRemote(const InodeSnapshot& dir,
                                                       const std::string& name) {
  const std::string file_key = dir.key + name;
  const std::string dir_key = file_key + "/";
  // One LIST and one HEAD at once: the listing finds implicit directories
  // (objects under "name/" without a marker). A found object answers without
  // waiting for the LIST (an object "name" is a file, see SEMANTICS.md), so a
  // store whose LIST is slow costs file lookups nothing. A name the kernel
  // holds as a file (its entry expired: every open of a file read each epoch
  // with a short TTL) is most likely a file still, so it gets the HEAD alone
  // and the LIST only if the object is gone: a LIST costs the store more
  // than a HEAD, and it would be thrown away.
  s3::ListObjectsV2Params lp;
  lp.bucket = dir.bucket;
  lp.prefix = dir_key;
  lp.delimiter = "/";
  lp.max_keys = 1;
  const auto asked = std::chrono::steady_clock::now();  // no later than either request
  std::future<Result<s3::ListObjectsV2Result>> listed;
  if (HeldKind(dir, name) != Kind::kFile) {
    auto pending = std::make_shared<std::promise<Result<s3::ListObjectsV2Result>>>();
    listed = pending->get_future();
    lookup_pool_->Post(
        [client = client_, lp, pending] { pending->set_value(client->ListObjectsV2(lp)); });
  }
  s3::HeadObjectParams hp;
  hp.bucket = dir.bucket;
  hp.key = file_key;
  auto head = client_->HeadObject(hp);
  if (head.ok()) {
    const ObjectAttrs attrs = FromHead(*head, asked);
    names_.StoreFile(dir.bucket, dir.key, name, attrs);
    if (meta_) meta_->StoreFile(dir.bucket, file_key, attrs);
    return Resolved{Kind::kFile, dir.bucket, file_key, attrs};
  }
  if (head.error().errno_value != ENOENT) {
    spdlog::warn("HeadObject s3://{}/{}: {}", hp.bucket, hp.key, head.error().ToString());
    return head.error();
  }
  auto list = listed.valid() ? listed.get() : client_->ListObjectsV2(lp);
  if (!list.ok()) {
    spdlog::warn("ListObjectsV2 s3://{}/{}: {}", lp.bucket, lp.prefix, list.error().ToString());
    return list.error();
  }
  if (!list->objects.empty() || !list->common_prefixes.empty()) {
    names_.StoreDir(dir.bucket, dir.key, name, asked);
    if (meta_) meta_->StoreDir(dir.bucket, file_key);
    return Resolved{Kind::kDir, dir.bucket, dir_key, {}};
  }
  names_.StoreMissing(dir.bucket, dir.key, name, asked);
  if (meta_) meta_->StoreMissing(dir.bucket, file_key);
  return MakeError(ENOENT, "NoSuchKey", file_key);
}

Result<Filesystem::Resolved> Filesystem::ResolveType(const InodeSnapshot& dir,
                                                     const std::string& name) {
  const std::string file_key = dir.key + name;
  s3::HeadObjectParams hp;
  hp.bucket = dir.bucket;
  hp.key = file_key;
  const auto asked = std::chrono::steady_clock::now();
  auto head = client_->HeadObject(hp);
  if (!head.ok()) {
    if (head.error().errno_value == ENOENT) return ResolveRemote(dir, name);  // gone since
    spdlog::warn("HeadObject s3://{}/{}: {}", hp.bucket, hp.key, head.error().ToString());
    return head.error();
  }
  const ObjectAttrs attrs = FromHead(*head, asked);
  names_.StoreFile(dir.bucket, dir.key, name, attrs);
  if (meta_) meta_->StoreFile(dir.bucket, file_key, attrs);
  return Resolved{Kind::kFile, dir.bucket, file_key, attrs};
}

ObjectAttrs Filesystem::KnownType(Ino dir, const std::string& bucket, const std::string& dir_key,
                                  const std::string& name, const ObjectAttrs& listed) {
  if (auto ino = inodes_.Find(dir, name)) {
    if (auto in = inodes_.Get(*ino); in && in->kind == Kind::kFile) {
      ObjectAttrs merged = MergeKnown(in->attrs, listed);
      if (merged.type != ObjectType::kUnknown) return merged;
    }
  }
  if (auto hit = names_.Find(bucket, dir_key, name)) {
    if (!hit->missing && hit->kind == Kind::kFile) return MergeKnown(hit->attrs, listed);
  }
  return listed;
}

void Filesystem::ListForLookups(const std::string& bucket, const std::string& dir_key) {
  lookup_pool_->Post([this, bucket, dir_key] {
    const auto started = std::chrono::steady_clock::now();
    // Too large to hold (TooLarge): lookups there go on asking S3 name by name.
    auto entries =
        ListWholeDirectory(*client_, bucket, dir_key, config_.listing_page_size, kMaxLookupListing);
    if (entries.ok()) {
      names_.StoreListing(bucket, dir_key, *entries, started);
      if (meta_) meta_->StoreListing(bucket, dir_key, *entries);
    } else {
      spdlog::debug("listing s3://{}/{} for lookups: {}", bucket, dir_key,
                    entries.error().ToString());
    }
    names_.ListingDone(bucket, dir_key);
  });
}

Result<Entry> Filesystem::Lookup(Ino parent, const std::string& name, pid_t pid) {
  auto dir = GetDir(parent);
  if (!dir.ok()) return dir.error();
  auto r = Resolve(*dir, name);
  if (!r.ok()) return r.error();
  if (r->kind == Kind::kFile && pid != 0) stat_walkers_.SawFileLookup(pid);
  Ino ino = inodes_.Acquire(parent, name, r->kind, r->bucket, r->key,
                            r->kind == Kind::kFile ? std::optional(r->attrs) : std::nullopt);
  return MakeEntry(ino, r->kind, AttrsHeld(ino, r->attrs));
}

ObjectAttrs Filesystem::AttrsHeld(Ino ino, const ObjectAttrs& answer) const {
  auto in = inodes_.Get(ino);
  return in && in->kind == Kind::kFile ? in->attrs : answer;
}

Result<ObjectAttrs> Filesystem::HeadFresh(const InodeSnapshot& file) {
  // A type still unknown is asked for like stale attributes.
  if (FreshWithin(file.attrs, config_.metadata_ttl) && !TypeUnknown(file.attrs)) {
    return file.attrs;
  }
  const auto [parent_key, name] = cache::SplitParent(file.key);
  if (auto hit = names_.Find(file.bucket, parent_key, name)) {
    if (hit->missing) return MakeError(ENOENT, "NoSuchKey", file.key);
    if (hit->kind == Kind::kFile && FreshWithin(hit->attrs, config_.metadata_ttl) &&
        !TypeUnknown(hit->attrs)) {
      inodes_.SetAttrs(file.ino, hit->attrs);
      return hit->attrs;
    }
  }
  if (meta_) {
    auto hit = meta_->Find(file.bucket, file.key);
    if (hit && !hit->missing && hit->kind == Kind::kFile && !TypeUnknown(hit->attrs)) {
      inodes_.SetAttrs(file.ino, hit->attrs);
      return hit->attrs;
    }
  }
  s3::HeadObjectParams p;
  p.bucket = file.bucket;
  p.key = file.key;
  const auto asked = std::chrono::steady_clock::now();
  auto head = client_->HeadObject(p);
  if (!head.ok()) {
    if (head.error().errno_value != ENOENT) {
      spdlog::warn("HeadObject s3://{}/{}: {}", p.bucket, p.key, head.error().ToString());
    } else {
      names_.Drop(file.bucket, parent_key, name);
      if (meta_)
        meta_->Changed(file.bucket, file.key);  // gone: its cached name and listing are stale
    }
    return head.error();
  }
  ObjectAttrs attrs = FromHead(*head, asked);
  inodes_.SetAttrs(file.ino, attrs);
  names_.StoreFile(file.bucket, parent_key, name, attrs);
  if (meta_) meta_->StoreFile(file.bucket, file.key, attrs);
  return attrs;
}

}  // namespace bucketfs::fs
