#include "fuse/pending_uploads.h"

#include <algorithm>
#include <vector>

namespace bucketfs::fs {

PendingUploads::PendingUploads(int concurrency, size_t max_pending)
    : max_pending_(std::max<size_t>(1, max_pending)),
      pool_(std::make_unique<base::WorkerPool>(std::max(1, concurrency))) {}

PendingUploads::~PendingUploads() { pool_.reset(); }

void PendingUploads::Submit(const std::string& bucket, const std::string& key,
                            std::function<Status()> upload) {
  auto entry = std::make_shared<Upload>();
  Key id{bucket, key};
  {
    MutexLock lock(mu_);
    while (pending_.size() >= max_pending_) changed_.Wait(mu_);
    pending_[id] = entry;
    ++counts_.submitted;
  }
  pool_->Post([this, entry, upload = std::move(upload)] { Finish(entry, upload()); });
}

bool PendingUploads::Then(const std::string& bucket, const std::string& key,
                          const std::string& next_bucket, const std::string& next_key,
                          std::function<Status(Status)> next) {
  MutexLock lock(mu_);
  auto it = pending_.find({bucket, key});
  if (it == pending_.end() || it->second->finishing || it->second->next) return false;
  it->second->next = std::move(next);
  pending_[{next_bucket, next_key}] = it->second;
  return true;
}

void PendingUploads::Finish(const std::shared_ptr<Upload>& upload, Status result) {
  std::function<Status(Status)> next;
  {
    MutexLock lock(mu_);
    upload->finishing = true;
    next = std::move(upload->next);
    upload->next = nullptr;
  }
  if (next) result = next(std::move(result));
  {
    MutexLock lock(mu_);
    upload->done = true;
    upload->result = result;
    if (result.ok()) {
      ++counts_.succeeded;
    } else {
      ++counts_.failed;
      if (first_unreported_.ok()) first_unreported_ = result;
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
      it = it->second == upload ? pending_.erase(it) : std::next(it);
    }
    changed_.NotifyAll();  // under the lock: a drain that wakes may end this object
  }
}

bool PendingUploads::Pending(const std::string& bucket, const std::string& key) const {
  MutexLock lock(mu_);
  return pending_.count({bucket, key}) != 0;
}

Status PendingUploads::WaitFor(const std::string& bucket, const std::string& key) {
  MutexLock lock(mu_);
  auto it = pending_.find({bucket, key});
  if (it == pending_.end()) return Status::Ok();
  std::shared_ptr<Upload> upload = it->second;
  while (!upload->done) changed_.Wait(mu_);
  return upload->result;
}

Status PendingUploads::WaitAll() {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<Upload>> before;
  for (const auto& [key, upload] : pending_) before.push_back(upload);
  for (const auto& u : before) {
    while (!u->done) changed_.Wait(mu_);
  }
  Status first = first_unreported_;
  first_unreported_ = Status::Ok();
  return first;
}

PendingUploads::Counts PendingUploads::counts() const {
  MutexLock lock(mu_);
  return counts_;
}

}  // namespace bucketfs::fs
