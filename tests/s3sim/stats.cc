#include "tests/s3sim/stats.h"

#include <algorithm>

namespace s3sim {

void Stats::CountRequest(const std::string& op) {
  bucketfs::MutexLock lock(mu_);
  ++ops_[op];
  ++total_;
}

void Stats::CountFault(const std::string& fault) {
  bucketfs::MutexLock lock(mu_);
  ++faults_[fault];
}

void Stats::AddBytesSent(uint64_t n) {
  bucketfs::MutexLock lock(mu_);
  bytes_sent_ += n;
}

void Stats::RequestStarted() {
  bucketfs::MutexLock lock(mu_);
  max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
}

void Stats::RequestEnded() {
  bucketfs::MutexLock lock(mu_);
  if (in_flight_ > 0) --in_flight_;
}

std::string Stats::Json() const {
  bucketfs::MutexLock lock(mu_);
  auto map_json = [](const std::map<std::string, uint64_t>& m) {
    std::string out = "{";
    for (const auto& [k, v] : m) {
      if (out.size() > 1) out += ",";
      out += "\"" + k + "\":" + std::to_string(v);
    }
    return out + "}";
  };
  return "{\"total\":" + std::to_string(total_) + ",\"ops\":" + map_json(ops_) +
         ",\"faults\":" + map_json(faults_) + ",\"body_bytes\":" + std::to_string(bytes_sent_) +
         ",\"max_in_flight\":" + std::to_string(max_in_flight_) + "}\n";
}

void Stats::Reset() {
  bucketfs::MutexLock lock(mu_);
  ops_.clear();
  faults_.clear();
  total_ = 0;
  bytes_sent_ = 0;
  max_in_flight_ = in_flight_;
}

}  // namespace s3sim
