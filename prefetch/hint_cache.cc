#include "prefetch/hint_cache.h"

#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace bucketfs::prefetch::internal {

HintCache::HintCache(std::shared_ptr<const FetchContext> ctx) : ctx_(std::move(ctx)) {}

void HintCache::Hint(const std::vector<ObjectVersion>& next) {
  const PrefetchConfig& cfg = ctx_->config;
  std::vector<std::pair<std::string, std::pair<ObjectVersion, PartPtr>>> to_fetch;
  std::vector<PartPtr> dropped;  // freed outside the lock
  {
    MutexLock lock(mu_);
    ++generation_;
    const uint64_t max_age = 2 * static_cast<uint64_t>(std::max(cfg.max_hinted_files, 1));
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.generation + max_age < generation_) {
        bytes_ -= it->second.part->size();
        dropped.push_back(std::move(it->second.part));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
    const auto share = static_cast<uint64_t>(cfg.hint_budget_fraction *
                                             static_cast<double>(ctx_->budget->limit()));
    for (const ObjectVersion& o : next) {
      if (o.size == 0 || o.size >= cfg.small_object_threshold) continue;
      std::string key = VersionKey(o);
      if (auto it = entries_.find(key); it != entries_.end()) {
        it->second.generation = generation_;
        continue;
      }
      if (entries_.size() >= static_cast<size_t>(std::max(cfg.max_hinted_files, 0))) break;
      if (bytes_ + o.size > share) break;
      if (!ctx_->budget->TryReserve(Part::HeldBytes(o.size, nullptr))) break;
      auto part = std::make_shared<Part>(0, o.size, ctx_->budget);
      part->CountWasteIn(ctx_->wasted_bytes);
      entries_.emplace(key, Entry{part, generation_});
      bytes_ += o.size;
      ++hinted_;
      to_fetch.push_back({key, {o, std::move(part)}});
    }
  }
  for (auto& [key, job] : to_fetch) {
    IssueFetch(*ctx_, job.first, std::move(job.second),
               [weak = weak_from_this(), key = std::move(key)](const PartPtr& part, Status s) {
                 if (auto self = weak.lock()) self->OnFetchDone(key, part, s);
                 part->Complete(std::move(s));
               });
  }
}

void HintCache::OnFetchDone(const std::string& key, const PartPtr& part, const Status& s) {
  if (s.ok()) return;
  PartPtr dropped;
  MutexLock lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.part == part) {
    bytes_ -= part->size();
    dropped = std::move(it->second.part);  // the fetch closure still holds it
    entries_.erase(it);
  }
}

PartPtr HintCache::Take(const ObjectVersion& object) {
  MutexLock lock(mu_);
  auto it = entries_.find(VersionKey(object));
  if (it == entries_.end()) return nullptr;
  PartPtr part = std::move(it->second.part);
  entries_.erase(it);
  bytes_ -= part->size();
  if (part->failed()) return nullptr;
  ++hits_;
  return part;
}

void HintCache::Clear() {
  std::unordered_map<std::string, Entry> entries;
  MutexLock lock(mu_);
  entries.swap(entries_);
  bytes_ = 0;
}

uint64_t HintCache::hinted() const {
  MutexLock lock(mu_);
  return hinted_;
}

uint64_t HintCache::hits() const {
  MutexLock lock(mu_);
  return hits_;
}

uint64_t HintCache::bytes() const {
  MutexLock lock(mu_);
  return bytes_;
}

}  // namespace bucketfs::prefetch::internal
