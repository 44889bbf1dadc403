#include "fuse/local_namespace.h"

namespace bucketfs::fs {
namespace {

// The direct child name of `dir_key` that `key` lies in, or "" if none.
std::string ChildName(const std::string& dir_key, const std::string& key) {
  if (key.size() <= dir_key.size() || key.compare(0, dir_key.size(), dir_key) != 0) return {};
  std::string rest = key.substr(dir_key.size());
  auto slash = rest.find('/');
  if (slash != std::string::npos && slash + 1 != rest.size()) return {};  // deeper
  return slash == std::string::npos ? rest : rest.substr(0, slash);
}

}  // namespace

void LocalNamespace::AddDir(const std::string& bucket, const std::string& dir_key) {
  MutexLock lock(mu_);
  dirs_.insert({bucket, dir_key});
}

bool LocalNamespace::HasDir(const std::string& bucket, const std::string& dir_key) const {
  MutexLock lock(mu_);
  return dirs_.count({bucket, dir_key}) != 0;
}

void LocalNamespace::RemoveDir(const std::string& bucket, const std::string& dir_key) {
  MutexLock lock(mu_);
  dirs_.erase({bucket, dir_key});
}

void LocalNamespace::AddFile(const std::string& bucket, const std::string& key,
                             std::shared_ptr<FileWriter> writer) {
  MutexLock lock(mu_);
  files_[{bucket, key}] = LocalFile{std::move(writer), std::chrono::system_clock::now()};
}

void LocalNamespace::RemoveFile(const std::string& bucket, const std::string& key,
                                const FileWriter* writer) {
  MutexLock lock(mu_);
  auto it = files_.find({bucket, key});
  if (it != files_.end() && it->second.writer.get() == writer) files_.erase(it);
}

void LocalNamespace::MoveFile(const std::string& bucket, const std::string& key,
                              const std::string& to_bucket, const std::string& to_key) {
  MutexLock lock(mu_);
  auto it = files_.find({bucket, key});
  if (it == files_.end()) return;
  LocalFile moved = std::move(it->second);
  files_.erase(it);
  files_[{to_bucket, to_key}] = std::move(moved);
}

std::shared_ptr<FileWriter> LocalNamespace::Writer(const std::string& bucket,
                                                   const std::string& key) const {
  MutexLock lock(mu_);
  auto it = files_.find({bucket, key});
  return it == files_.end() ? nullptr : it->second.writer;
}

std::optional<ObjectAttrs> LocalNamespace::FileAttrs(const std::string& bucket,
                                                     const std::string& key) const {
  MutexLock lock(mu_);
  auto it = files_.find({bucket, key});
  if (it == files_.end()) return std::nullopt;
  ObjectAttrs a;
  a.size = it->second.writer->size();
  a.mtime = it->second.created;
  a.fetched = std::chrono::steady_clock::now();
  return a;
}

std::vector<ListedEntry> LocalNamespace::ChildrenOf(const std::string& bucket,
                                                    const std::string& dir_key) const {
  MutexLock lock(mu_);
  std::vector<ListedEntry> out;
  for (auto it = dirs_.lower_bound({bucket, dir_key}); it != dirs_.end() && it->first == bucket;
       ++it) {
    if (it->second.compare(0, dir_key.size(), dir_key) != 0) break;
    std::string name = ChildName(dir_key, it->second);
    if (!name.empty() && it->second == dir_key + name + "/") out.push_back({name, Kind::kDir, {}});
  }
  for (auto it = files_.lower_bound({bucket, dir_key});
       it != files_.end() && it->first.first == bucket; ++it) {
    const std::string& key = it->first.second;
    if (key.compare(0, dir_key.size(), dir_key) != 0) break;
    std::string name = ChildName(dir_key, key);
    if (name.empty() || key != dir_key + name) continue;
    ObjectAttrs a;
    a.size = it->second.writer->size();
    a.mtime = it->second.created;
    a.fetched = std::chrono::steady_clock::now();
    out.push_back({name, Kind::kFile, a});
  }
  return out;
}

bool LocalNamespace::HasAnythingUnder(const std::string& bucket, const std::string& dir_key) const {
  MutexLock lock(mu_);
  auto d = dirs_.upper_bound({bucket, dir_key});
  if (d != dirs_.end() && d->first == bucket &&
      d->second.compare(0, dir_key.size(), dir_key) == 0) {
    return true;
  }
  auto f = files_.lower_bound({bucket, dir_key});
  return f != files_.end() && f->first.first == bucket &&
         f->first.second.compare(0, dir_key.size(), dir_key) == 0;
}

bool LocalNamespace::HasFilesUnder(const std::string& bucket, const std::string& dir_key) const {
  MutexLock lock(mu_);
  auto f = files_.lower_bound({bucket, dir_key});
  return f != files_.end() && f->first.first == bucket &&
         f->first.second.compare(0, dir_key.size(), dir_key) == 0;
}

void LocalNamespace::RenameDirs(const std::string& bucket, const std::string& from,
                                const std::string& to_bucket, const std::string& to) {
  MutexLock lock(mu_);
  std::vector<Key> moved;
  for (auto it = dirs_.lower_bound({bucket, from});
       it != dirs_.end() && it->first == bucket && it->second.compare(0, from.size(), from) == 0;) {
    moved.emplace_back(to_bucket, to + it->second.substr(from.size()));
    it = dirs_.erase(it);
  }
  dirs_.insert(moved.begin(), moved.end());
}

}  // namespace bucketfs::fs
