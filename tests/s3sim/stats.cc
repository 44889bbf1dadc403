#include "tests/s3sim/stats.h"

namespace s3sim {

void Stats::CountRequest(const std::string& op) {
  std::lock_guard lock(mu_);
  ++ops_[op];
  ++total_;
}

void Stats::CountFault(const std::string& fault) {
  std::lock_guard lock(mu_);
  ++faults_[fault];
}

void Stats::AddBytesSent(uint64_t n) {
  std::lock_guard lock(mu_);
  bytes_sent_ += n;
}

std::string Stats::Json() const {
  std::lock_guard lock(mu_);
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
         "}\n";
}

void Stats::Reset() {
  std::lock_guard lock(mu_);
  ops_.clear();
  faults_.clear();
  total_ = 0;
  bytes_sent_ = 0;
}

}  // namespace s3sim
