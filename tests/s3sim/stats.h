// Request counters per S3 operation, served at GET /__s3sim/stats (JSON) and
// cleared by POST /__s3sim/reset-stats, so tests can count server requests;
// also the most S3 requests in flight at once (from the handler's start to
// the response's last byte, time to first byte included), which shows
// whether a client's requests overlap.
#ifndef TESTS_S3SIM_STATS_H_
#define TESTS_S3SIM_STATS_H_

#include <cstdint>
#include <map>
#include <string>

#include "base/mutex.h"

namespace s3sim {

class Stats {
 public:
  void CountRequest(const std::string& op);
  void CountFault(const std::string& fault);
  void AddBytesSent(uint64_t n);
  void RequestStarted();
  void RequestEnded();
  std::string Json() const;
  void Reset();

 private:
  mutable bucketfs::Mutex mu_;
  std::map<std::string, uint64_t> ops_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> faults_ GUARDED_BY(mu_);
  uint64_t total_ GUARDED_BY(mu_) = 0;
  uint64_t bytes_sent_ GUARDED_BY(mu_) = 0;
  uint64_t in_flight_ GUARDED_BY(mu_) = 0;
  uint64_t max_in_flight_ GUARDED_BY(mu_) = 0;  // since the last Reset
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_STATS_H_
