#include "metrics/text_format.h"

#include <gtest/gtest.h>

#include <limits>

namespace bucketfs::metrics {
namespace {

TEST(TextFormat, CounterAndGaugeWithHelpAndType) {
  Registry r;
  r.GetCounter("bucketfs_reads_total", "Reads.", {{"op", "GET"}, {"status", "200"}}).Add(3);
  r.GetGauge("bucketfs_mem_bytes", "Memory in use.").Set(-4);
  EXPECT_EQ(r.RenderText(),
            "# HELP bucketfs_reads_total Reads.\n"
            "# TYPE bucketfs_reads_total counter\n"
            "bucketfs_reads_total{op=\"GET\",status=\"200\"} 3\n"
            "# HELP bucketfs_mem_bytes Memory in use.\n"
            "# TYPE bucketfs_mem_bytes gauge\n"
            "bucketfs_mem_bytes -4\n");
}

TEST(TextFormat, HistogramHasBucketsSumAndCount) {
  Registry r;
  const double bounds[] = {0.005, 1, 2.5};
  Histogram& h = r.GetHistogram("lat_seconds", "Latency.", bounds, {{"op", "read"}});
  h.Observe(0.001);
  h.Observe(2);
  h.Observe(7);
  EXPECT_EQ(r.RenderText(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{op=\"read\",le=\"0.005\"} 1\n"
            "lat_seconds_bucket{op=\"read\",le=\"1\"} 1\n"
            "lat_seconds_bucket{op=\"read\",le=\"2.5\"} 2\n"
            "lat_seconds_bucket{op=\"read\",le=\"+Inf\"} 3\n"
            "lat_seconds_sum{op=\"read\"} 9.001\n"
            "lat_seconds_count{op=\"read\"} 3\n");
}

TEST(TextFormat, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("x\\y\nz \"q\""), "x\\\\y\\nz \"q\"");
  Registry r;
  r.GetGauge("g", "line one\nline two", {{"mnt", "/mnt/\"odd\""}}).Set(1);
  EXPECT_EQ(r.RenderText(),
            "# HELP g line one\\nline two\n"
            "# TYPE g gauge\n"
            "g{mnt=\"/mnt/\\\"odd\\\"\"} 1\n");
}

TEST(TextFormat, Values) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(12345678901234.0), "12345678901234");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(TextFormat, FamiliesWithoutSeriesAreLeftOut) {
  EXPECT_EQ(RenderText({FamilySnapshot{"empty", "none", Kind::kCounter, {}}}), "");
}

}  // namespace
}  // namespace bucketfs::metrics
