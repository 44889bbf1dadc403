// s3sim command-line options, parsed once into an immutable struct.
#ifndef TESTS_S3SIM_OPTIONS_H_
#define TESTS_S3SIM_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/s3sim/faults.h"
#include "tests/s3sim/hostile.h"
#include "tests/s3sim/http_server.h"
#include "tests/s3sim/preload.h"
#include "tests/s3sim/rate_limiter.h"
#include "tests/s3sim/sigv4_verifier.h"

namespace s3sim {

struct Options {
  ServerConfig server;
  AuthConfig auth;
  FaultConfig faults;
  RateLimitConfig rate_limit;
  HostileConfig hostile;  // --hostile KIND=MATCH
  std::string port_file;
  std::vector<std::string> buckets;
  std::vector<PreloadSpec> preloads;
  uint64_t min_part_size = 5ULL << 20;
  uint64_t body_pool_bytes = 2ULL << 30;  // BodyPool capacity
  int threads = 0;                        // preload generation threads; 0 = hardware concurrency
};

// Parses argv. On error or --help returns nullopt and fills *message (with
// *exit_code 2 for errors, 0 for --help).
std::optional<Options> ParseOptions(int argc, char** argv, std::string* message, int* exit_code);

std::string Usage();

}  // namespace s3sim

#endif  // TESTS_S3SIM_OPTIONS_H_
