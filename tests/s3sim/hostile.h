// Misbehaviours on purpose, for the hostile-store tests of clients: unlike
// the random faults (faults.h) each is tied to the keys it names, so a test
// aims it at some objects and checks that the rest are served as before.
//   list-loop=PREFIX    ListObjectsV2 under PREFIX: a truncated empty page
//                       whose NextContinuationToken is the token it was asked
//                       with (first page: "again"), forever
//   wrong-range=SUBSTR  ranged GETs of keys holding SUBSTR get a 206 of the
//                       range one byte later (labelled as such)
//   short-body=SUBSTR   GETs of keys holding SUBSTR announce the whole
//                       Content-Length, then close before the body
// Each answer is counted in the stats' faults as its kind.
#ifndef TESTS_S3SIM_HOSTILE_H_
#define TESTS_S3SIM_HOSTILE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/s3sim/handlers.h"

namespace s3sim {

struct HostileConfig {
  std::vector<std::pair<std::string, std::string>> rules;  // kind, match
};

// Parses "KIND=MATCH"; false for an unknown kind or an empty match.
bool AddHostileRule(HostileConfig& config, const std::string& spec);

// The kind of misbehaviour `config` has for this request, or "".
std::string HostileKind(const HostileConfig& config, const S3Request& r);

// Before the handler: shifts the Range of a wrong-range request. Returns the
// answer that replaces the handler's (list-loop), if any.
std::optional<HttpResponse> HostileBefore(const std::string& kind, S3Request& r);
// After the handler: cuts the body of a short-body answer.
void HostileAfter(const std::string& kind, HttpResponse& resp);

}  // namespace s3sim

#endif  // TESTS_S3SIM_HOSTILE_H_
