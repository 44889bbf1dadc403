#include "tests/s3sim/faults.h"

#include <chrono>
#include <cmath>

#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

// Seeds the body faults' generator apart from the requests' one.
constexpr uint64_t kBodyStream = 0x6a09e667f3bcc909ULL;

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

const char* FaultName(BodyFault::Kind kind) {
  switch (kind) {
    case BodyFault::Kind::kReset:
      return "reset";
    case BodyFault::Kind::kTruncate:
      return "truncate";
    case BodyFault::Kind::kStall:
      return "stall";
    case BodyFault::Kind::kNone:
      break;
  }
  return "none";
}

FaultInjector::FaultInjector(FaultConfig config) : config_(std::move(config)) {
  if (!config_.log_path.empty()) log_ = std::fopen(config_.log_path.c_str(), "a");
}

FaultInjector::~FaultInjector() {
  if (log_ != nullptr) std::fclose(log_);
}

bool FaultInjector::enabled() const {
  return config_.fail_rate > 0 || config_.reset_rate > 0 || config_.truncate_rate > 0 ||
         config_.stall_rate > 0 || config_.lost_reply_rate > 0;
}

FaultTicket FaultInjector::Begin(const std::string& op, const std::string& method) {
  FaultTicket t;
  t.seq = seq_.fetch_add(1) + 1;
  t.eligible =
      enabled() && (config_.ops.empty() || config_.ops.count(op) || config_.ops.count(method));
  SplitMix64 rng(config_.seed * 0x2545f4914f6cdd1dULL + t.seq);
  t.fail_draw = rng.Uniform();
  rng.Next();  // two draws once used by body faults: the later ones keep their values for a seed
  rng.Next();
  t.status_draw = rng.Uniform();
  t.lost_draw = rng.Uniform();  // drawn last: earlier draws keep their values for a seed
  return t;
}

int FaultInjector::FailureStatus(const FaultTicket& t) const {
  if (!t.eligible || t.fail_draw >= config_.fail_rate) return 0;
  return t.status_draw < 0.5 ? 500 : 503;
}

bool FaultInjector::LosesReply(const FaultTicket& t) const {
  return t.eligible && t.lost_draw < config_.lost_reply_rate;
}

void FaultInjector::Restart() {
  seq_.store(0);
  body_seq_.store(0);
}

BodyFault FaultInjector::BodyFaultFor(const FaultTicket& t, uint64_t body_length) {
  BodyFault f;
  if (!t.eligible || body_length == 0) return f;
  const uint64_t n = body_seq_.fetch_add(1) + 1;
  SplitMix64 rng((config_.seed ^ kBodyStream) * 0x2545f4914f6cdd1dULL + n);
  const double r = rng.Uniform();
  const double cut_draw = rng.Uniform();
  if (r < config_.reset_rate) {
    f.kind = BodyFault::Kind::kReset;
  } else if (r < config_.reset_rate + config_.truncate_rate) {
    f.kind = BodyFault::Kind::kTruncate;
  } else if (r < config_.reset_rate + config_.truncate_rate + config_.stall_rate) {
    f.kind = BodyFault::Kind::kStall;
  } else {
    return f;
  }
  f.cut_at = static_cast<uint64_t>(std::floor(cut_draw * static_cast<double>(body_length)));
  if (f.cut_at >= body_length) f.cut_at = body_length - 1;
  return f;
}

void FaultInjector::Log(const FaultTicket& t, const std::string& fault, const HttpRequest& req,
                        const std::string& op, int status, uint64_t cut_at, uint64_t length) {
  bucketfs::MutexLock lock(log_mu_);
  if (log_ == nullptr) return;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  double secs = std::chrono::duration<double>(now).count();
  const std::string* range = req.Header("range");
  std::fprintf(log_,
               "{\"time\":%.6f,\"seq\":%llu,\"fault\":%s,\"op\":%s,\"method\":%s,\"path\":%s,"
               "\"range\":%s,\"status\":%d,\"cut_at\":%llu,\"length\":%llu}\n",
               secs, static_cast<unsigned long long>(t.seq), JsonString(fault).c_str(),
               JsonString(op).c_str(), JsonString(req.method).c_str(),
               JsonString(req.target).c_str(), range ? JsonString(*range).c_str() : "null", status,
               static_cast<unsigned long long>(cut_at), static_cast<unsigned long long>(length));
  std::fflush(log_);
}

}  // namespace s3sim
