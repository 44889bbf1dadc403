#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "metrics/indexed_counters.h"

namespace bucketfs::metrics {
namespace {

TEST(Registry, SameNameAndLabelsIsTheSameSeries) {
  Registry r;
  Counter& a = r.GetCounter("x_total", "x", {{"op", "GET"}});
  Counter& b = r.GetCounter("x_total", "x", {{"op", "GET"}});
  Counter& c = r.GetCounter("x_total", "x", {{"op", "PUT"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  a.Add(2);
  c.Add();
  EXPECT_EQ(r.Sum("x_total"), 3);
  EXPECT_EQ(r.Sum("x_total", {{"op", "GET"}}), 2);
  EXPECT_EQ(r.Sum("x_total", {{"op", "HEAD"}}), 0);
}

TEST(Registry, CountsFromManyThreadsAreExact) {
  Registry r;
  Counter& c = r.GetCounter("n_total", "n");
  Histogram& h = r.GetHistogram("h_seconds", "h", LatencyBuckets());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Add();
        h.Observe(0.001);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Value(), 80000u);
  EXPECT_EQ(h.Read().count(), 80000u);
  EXPECT_NEAR(h.Read().sum, 80.0, 1e-6);
}

TEST(Registry, FunctionsAreReadAtCollect) {
  Registry r;
  double v = 1;
  r.AddGaugeFn("g_bytes", "g", {}, [&v] { return v; });
  EXPECT_EQ(r.Sum("g_bytes"), 1);
  v = 5;
  EXPECT_EQ(r.Sum("g_bytes"), 5);
}

TEST(Registry, HistogramBucketsAreCumulativeWithLeInclusive) {
  const double bounds[] = {1, 2, 5};
  Histogram h(bounds);
  h.Observe(0.5);
  h.Observe(1);  // le="1" includes 1
  h.Observe(3);
  h.Observe(100);
  const Histogram::Snapshot s = h.Read();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 2, 3, 4}));
  EXPECT_EQ(s.count(), 4u);
  EXPECT_DOUBLE_EQ(s.sum, 104.5);
}

TEST(Registry, IndexedCountersNameTheirValuesAndCapTheIndex) {
  Registry r;
  IndexedCounters by_status(r, "req_total", "r", {{"op", "GET"}}, "status", 600);
  IndexedCounters by_errno(r, "err_total", "e", {}, "errno", 4,
                           [](size_t i) { return "E" + std::to_string(i); });
  by_status.Add(200);
  by_status.Add(200);
  by_status.Add(404);
  by_status.Add(9999);
  by_errno.Add(2);
  EXPECT_EQ(r.Sum("req_total", {{"status", "200"}}), 2);
  EXPECT_EQ(r.Sum("req_total", {{"status", "404"}, {"op", "GET"}}), 1);
  EXPECT_EQ(r.Sum("req_total", {{"status", "other"}}), 1);
  EXPECT_EQ(r.Sum("err_total", {{"errno", "E2"}}), 1);
}

TEST(Registry, NameRules) {
  EXPECT_TRUE(IsValidMetricName("bucketfs_fuse_ops_total"));
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_FALSE(IsValidMetricName("9abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("op"));
  EXPECT_FALSE(IsValidLabelName("__reserved"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

TEST(RegistryDeathTest, AnotherKindUnderOneNameAborts) {
  Registry r;
  r.GetCounter("same", "s");
  EXPECT_DEATH(r.GetGauge("same", "s"), "another kind");
  EXPECT_DEATH(r.GetCounter("bad name", "s"), "invalid metric name");
  EXPECT_DEATH(r.GetHistogram("h", "h", LatencyBuckets(), {{"le", "1"}}), "invalid label name");
}

}  // namespace
}  // namespace bucketfs::metrics
