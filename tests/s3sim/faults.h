// Seeded, reproducible fault injection and the fault log.
//
// Each request (admin requests excepted) takes the next sequence number; its
// decisions come from a PRNG seeded with (seed, sequence number), so the same
// request order meets the same faults. Outright failures (500 InternalError /
// 503 SlowDown) are decided before the handler runs, so a failed PUT stores
// nothing; body faults (reset, truncate, stall) are decided for responses with
// a body and carried out by the connection loop. Body faults are drawn from a
// sequence of their own, counting only the responses that may take one, so
// the n-th such response meets the same fault whatever other requests came
// between: a client's concurrent HEADs and PUTs cannot take a test's body
// faults. Restart() starts both sequences over, as at startup. Every
// injected fault is written as one JSON line to the fault log, if one is
// configured.
#ifndef TESTS_S3SIM_FAULTS_H_
#define TESTS_S3SIM_FAULTS_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include "base/mutex.h"
#include "tests/s3sim/http_message.h"

namespace s3sim {

struct FaultConfig {
  double fail_rate = 0;
  double reset_rate = 0;
  double truncate_rate = 0;
  double stall_rate = 0;
  // The request is carried out, then answered 500 InternalError: the answer a
  // client gets when a store's front end fails after its back end committed.
  double lost_reply_rate = 0;
  uint64_t seed = 1;
  // Methods ("GET") or operation names ("GetObject") that may get faults;
  // empty means all.
  std::set<std::string> ops;
  std::string log_path;
};

// Deterministic 64-bit generator (splitmix64).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// The per-request view of the injector.
struct FaultTicket {
  uint64_t seq = 0;
  bool eligible = false;
  double fail_draw = 1, status_draw = 0, lost_draw = 1;
};

class FaultInjector {
 public:
  explicit FaultInjector(FaultConfig config);
  ~FaultInjector();
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  bool enabled() const;
  FaultTicket Begin(const std::string& op, const std::string& method);
  // 0, or the status (500 or 503) the request must fail with.
  int FailureStatus(const FaultTicket& t) const;
  // Takes the next body sequence number when `t` may fault and the body is
  // not empty.
  BodyFault BodyFaultFor(const FaultTicket& t, uint64_t body_length);
  // Whether the successful answer of a request carried out must be replaced
  // by 500 InternalError (--lost-reply-rate).
  bool LosesReply(const FaultTicket& t) const;

  // Sequence numbers (of requests and of bodies) start over from 1.
  void Restart();

  // Appends a JSON line describing an injected fault.
  void Log(const FaultTicket& t, const std::string& fault, const HttpRequest& req,
           const std::string& op, int status, uint64_t cut_at, uint64_t length);

 private:
  const FaultConfig config_;
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> body_seq_{0};  // responses that might take a body fault
  bucketfs::Mutex log_mu_;
  FILE* log_ GUARDED_BY(log_mu_) = nullptr;
};

const char* FaultName(BodyFault::Kind kind);

}  // namespace s3sim

#endif  // TESTS_S3SIM_FAULTS_H_
