#include "tests/s3sim/faults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace s3sim {
namespace {

FaultConfig BodyFaults() {
  FaultConfig c;
  c.reset_rate = 0.1;
  c.truncate_rate = 0.1;
  c.stall_rate = 0.1;
  c.seed = 7;
  return c;
}

// The kinds the first `count` GET bodies meet, with `between` other
// requests (HEADs, PUTs: no body fault) before each.
std::vector<BodyFault::Kind> GetKinds(FaultInjector& f, int count, int between) {
  std::vector<BodyFault::Kind> kinds;
  kinds.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < between; ++j) {
      FaultTicket other = f.Begin("HeadObject", "HEAD");
      EXPECT_EQ(f.BodyFaultFor(other, 0).kind, BodyFault::Kind::kNone);
    }
    kinds.push_back(f.BodyFaultFor(f.Begin("GetObject", "GET"), 1000).kind);
  }
  return kinds;
}

TEST(FaultInjector, BodyFaultsDoNotDependOnOtherRequests) {
  FaultInjector alone(BodyFaults());
  FaultInjector mixed(BodyFaults());
  const auto a = GetKinds(alone, 200, 0);
  EXPECT_EQ(a, GetKinds(mixed, 200, 3));
  int faulted = 0;
  for (auto k : a) faulted += k != BodyFault::Kind::kNone;
  EXPECT_GT(faulted, 30);  // 30% of 200, roughly
  EXPECT_LT(faulted, 90);
}

TEST(FaultInjector, BodyFaultsOnlyForRequestsThatMayFault) {
  FaultConfig c = BodyFaults();
  c.ops = {"GetObject"};
  FaultInjector with_lists(c);
  FaultInjector without(c);
  std::vector<BodyFault::Kind> a, b;
  a.reserve(100);
  b.reserve(100);
  for (int i = 0; i < 100; ++i) {
    // A listing is a GET with a body, but not in --fault-ops: it takes no
    // body sequence number.
    EXPECT_EQ(with_lists.BodyFaultFor(with_lists.Begin("ListObjectsV2", "GET"), 500).kind,
              BodyFault::Kind::kNone);
    a.push_back(with_lists.BodyFaultFor(with_lists.Begin("GetObject", "GET"), 500).kind);
    b.push_back(without.BodyFaultFor(without.Begin("GetObject", "GET"), 500).kind);
  }
  EXPECT_EQ(a, b);
}

TEST(FaultInjector, RestartStartsTheSequencesOver) {
  FaultConfig c = BodyFaults();
  c.fail_rate = 0.2;
  FaultInjector f(c);
  auto statuses = [&f] {
    std::vector<int> s(50);
    for (int& status : s) status = f.FailureStatus(f.Begin("PutObject", "PUT"));
    return s;
  };
  const auto first = statuses();
  EXPECT_NE(std::count(first.begin(), first.end(), 0), 50);  // some requests fail
  const auto kinds = GetKinds(f, 50, 0);
  f.Restart();
  EXPECT_EQ(first, statuses());
  EXPECT_EQ(kinds, GetKinds(f, 50, 0));
}

}  // namespace
}  // namespace s3sim
