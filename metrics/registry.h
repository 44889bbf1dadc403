// Registry: the metrics of one mount, by name and labels, rendered as the
// Prometheus text exposition format (text_format.h).
//
// Registering takes the registry's lock and is meant for setup; what it
// returns is a stable reference that lives as long as the registry, so the
// hot path updates a Counter/Gauge/Histogram directly with no lookup and no
// lock. Values a component already counts (a memory budget, a cache's hits)
// are registered as functions read at scrape time and cost nothing between
// scrapes. There is no process-wide registry: the composition root makes one
// and hands it (or observers built on it) to the components, so tests use
// their own or none.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "metrics/metric.h"

namespace bucketfs::metrics {

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
};
using Labels = std::vector<Label>;

enum class Kind { kCounter, kGauge, kHistogram };

// One value of one series, as rendered (histograms give _bucket, _sum, _count).
struct Sample {
  std::string name;  // with the suffix for histogram parts
  Labels labels;     // with "le" for buckets
  double value = 0;
};

// One metric name: its kind, help and every labelled series.
struct FamilySnapshot {
  std::string name;
  std::string help;
  Kind kind = Kind::kCounter;
  std::vector<Sample> samples;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The series `name{labels}`, made on first use. A name keeps the kind,
  // help and bucket bounds it was first registered with; registering it again
  // as another kind, or with invalid names, is a programming error (abort).
  Counter& GetCounter(std::string_view name, std::string_view help, const Labels& labels = {})
      EXCLUDES(mu_);
  Gauge& GetGauge(std::string_view name, std::string_view help, const Labels& labels = {})
      EXCLUDES(mu_);
  Histogram& GetHistogram(std::string_view name, std::string_view help,
                          std::span<const double> bounds, const Labels& labels = {}) EXCLUDES(mu_);

  // A series whose value `read` returns at scrape time. `read` must be
  // thread-safe and must not call into the registry.
  void AddCounterFn(std::string_view name, std::string_view help, const Labels& labels,
                    std::function<double()> read) EXCLUDES(mu_);
  void AddGaugeFn(std::string_view name, std::string_view help, const Labels& labels,
                  std::function<double()> read) EXCLUDES(mu_);

  // Every family in registration order, series in registration order.
  std::vector<FamilySnapshot> Collect() const EXCLUDES(mu_);
  // Collect() in the text exposition format 0.0.4.
  std::string RenderText() const EXCLUDES(mu_);

  // Sum of every sample named `name` whose labels include all of `match`
  // (for summaries such as `bucketfs status`); 0 when none.
  double Sum(std::string_view name, const Labels& match = {}) const EXCLUDES(mu_);

 private:
  struct Series {
    Labels labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
    std::function<double()> read;
  };
  struct Family {
    std::string name;
    std::string help;
    Kind kind;
    std::vector<double> bounds;
    std::vector<std::unique_ptr<Series>> series;
  };

  Series& FindOrAdd(std::string_view name, std::string_view help, Kind kind,
                    std::span<const double> bounds, const Labels& labels) REQUIRES(mu_);
  void AppendSamples(const Family& f, const Series& s, std::vector<Sample>& out) const
      REQUIRES(mu_);

  mutable Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ GUARDED_BY(mu_);
  std::unordered_map<std::string, Family*> by_name_ GUARDED_BY(mu_);
};

// Valid metric and label names of the exposition format.
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

}  // namespace bucketfs::metrics
