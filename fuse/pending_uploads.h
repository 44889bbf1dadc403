// PendingUploads: the uploads of files closed on an --async-close mount,
// completed in the background so that close() returns once the file is
// staged locally.
//
// Each upload is a task keyed by (bucket, key): at most `concurrency` run at
// once, and Submit waits while `max_pending` are queued or running, which
// bounds the local staging space they hold. Whoever needs the object in S3
// waits for it: WaitFor one key (an open, rename or unlink of that name),
// or WaitAll (fsync of a directory, unmount), which returns the first error
// of every upload that failed since the previous WaitAll, so that no failure
// goes unreported.
//
// Thread-safe. Destroying it waits for every upload.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "base/mutex.h"
#include "base/task_runner.h"
#include "base/thread_annotations.h"
#include "s3/result.h"

namespace bucketfs::fs {

class PendingUploads {
 public:
  PendingUploads(int concurrency, size_t max_pending);
  ~PendingUploads();
  PendingUploads(const PendingUploads&) = delete;
  PendingUploads& operator=(const PendingUploads&) = delete;

  // Runs `upload` in the background for s3://bucket/key. REQUIRES: no upload
  // of that key is pending (callers WaitFor it before a new writer exists).
  void Submit(const std::string& bucket, const std::string& key, std::function<Status()> upload);
  // Chains `next` after the pending upload of `key`, on the same thread, with
  // that upload's result; its result becomes the upload's. From now on the
  // upload stands for `next_key` too: WaitFor either key waits for both
  // steps. False (nothing chained) when no upload of `key` is pending or one
  // is already chained.
  bool Then(const std::string& bucket, const std::string& key, const std::string& next_bucket,
            const std::string& next_key, std::function<Status(Status)> next);
  // True while an upload of the key is queued or running.
  bool Pending(const std::string& bucket, const std::string& key) const;
  // Waits until no upload of the key is pending; returns the result of the
  // one it waited for (Ok when there was none).
  Status WaitFor(const std::string& bucket, const std::string& key);
  // Waits for every upload submitted before the call; returns the first
  // failure not yet returned by a WaitAll.
  Status WaitAll();

  struct Counts {
    uint64_t submitted = 0, succeeded = 0, failed = 0;
  };
  Counts counts() const;

 private:
  // Read and written under mu_ (the analysis cannot name the owner's mutex
  // from a nested struct).
  struct Upload {
    bool finishing = false;  // the upload returned: nothing can be chained any more
    bool done = false;
    Status result;
    std::function<Status(Status)> next;  // chained by Then; runs before done
  };
  using Key = std::pair<std::string, std::string>;

  void Finish(const std::shared_ptr<Upload>& upload, Status result) EXCLUDES(mu_);

  const size_t max_pending_;
  mutable Mutex mu_;
  CondVar changed_;  // an upload finished
  std::map<Key, std::shared_ptr<Upload>> pending_ GUARDED_BY(mu_);
  Status first_unreported_ GUARDED_BY(mu_);
  Counts counts_ GUARDED_BY(mu_);
  // Last member: destroyed (drained) first, while the fields above still exist.
  std::unique_ptr<base::WorkerPool> pool_;
};

}  // namespace bucketfs::fs
