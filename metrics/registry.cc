#include "metrics/registry.h"

#include <cstdio>
#include <cstdlib>

#include "metrics/text_format.h"

namespace bucketfs::metrics {
namespace {

[[noreturn]] void Misuse(std::string_view what, std::string_view name) {
  std::fprintf(stderr, "metrics registry: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(name.size()), name.data());
  std::abort();
}

bool HasAll(const Labels& labels, const Labels& match) {
  for (const Label& m : match) {
    bool found = false;
    for (const Label& l : labels) found = found || l == m;
    if (!found) return false;
  }
  return true;
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

Registry::Series& Registry::FindOrAdd(std::string_view name, std::string_view help, Kind kind,
                                      std::span<const double> bounds, const Labels& labels) {
  if (!IsValidMetricName(name)) Misuse("invalid metric name", name);
  for (const Label& l : labels) {
    if (!IsValidLabelName(l.name) || (kind == Kind::kHistogram && l.name == "le")) {
      Misuse("invalid label name", l.name);
    }
  }
  Family*& slot = by_name_[std::string(name)];
  if (slot == nullptr) {
    families_.push_back(std::make_unique<Family>(
        Family{std::string(name), std::string(help), kind, {bounds.begin(), bounds.end()}, {}}));
    slot = families_.back().get();
  } else if (slot->kind != kind) {
    Misuse("registered again as another kind", name);
  }
  for (auto& s : slot->series) {
    if (s->labels == labels) return *s;
  }
  slot->series.push_back(std::make_unique<Series>());
  Series& s = *slot->series.back();
  s.labels = labels;
  return s;
}

Counter& Registry::GetCounter(std::string_view name, std::string_view help, const Labels& labels) {
  MutexLock lock(mu_);
  Series& s = FindOrAdd(name, help, Kind::kCounter, {}, labels);
  if (s.read) Misuse("series is a function", name);
  if (!s.counter) s.counter = std::make_unique<Counter>();
  return *s.counter;
}

Gauge& Registry::GetGauge(std::string_view name, std::string_view help, const Labels& labels) {
  MutexLock lock(mu_);
  Series& s = FindOrAdd(name, help, Kind::kGauge, {}, labels);
  if (s.read) Misuse("series is a function", name);
  if (!s.gauge) s.gauge = std::make_unique<Gauge>();
  return *s.gauge;
}

Histogram& Registry::GetHistogram(std::string_view name, std::string_view help,
                                  std::span<const double> bounds, const Labels& labels) {
  MutexLock lock(mu_);
  Series& s = FindOrAdd(name, help, Kind::kHistogram, bounds, labels);
  if (!s.histogram) s.histogram = std::make_unique<Histogram>(by_name_[std::string(name)]->bounds);
  return *s.histogram;
}

void Registry::AddCounterFn(std::string_view name, std::string_view help, const Labels& labels,
                            std::function<double()> read) {
  MutexLock lock(mu_);
  Series& s = FindOrAdd(name, help, Kind::kCounter, {}, labels);
  if (s.counter) Misuse("series is a counter", name);
  s.read = std::move(read);
}

void Registry::AddGaugeFn(std::string_view name, std::string_view help, const Labels& labels,
                          std::function<double()> read) {
  MutexLock lock(mu_);
  Series& s = FindOrAdd(name, help, Kind::kGauge, {}, labels);
  if (s.gauge) Misuse("series is a gauge", name);
  s.read = std::move(read);
}

void Registry::AppendSamples(const Family& f, const Series& s, std::vector<Sample>& out) const {
  if (s.read) {
    out.push_back({f.name, s.labels, s.read()});
  } else if (s.counter) {
    out.push_back({f.name, s.labels, static_cast<double>(s.counter->Value())});
  } else if (s.gauge) {
    out.push_back({f.name, s.labels, static_cast<double>(s.gauge->Value())});
  } else if (s.histogram) {
    const Histogram::Snapshot h = s.histogram->Read();
    for (size_t i = 0; i < h.cumulative.size(); ++i) {
      Labels with_le = s.labels;
      with_le.push_back({"le", i < h.bounds.size() ? FormatValue(h.bounds[i]) : "+Inf"});
      out.push_back({f.name + "_bucket", std::move(with_le), static_cast<double>(h.cumulative[i])});
    }
    out.push_back({f.name + "_sum", s.labels, h.sum});
    out.push_back({f.name + "_count", s.labels, static_cast<double>(h.count())});
  }
}

std::vector<FamilySnapshot> Registry::Collect() const {
  MutexLock lock(mu_);
  std::vector<FamilySnapshot> out;
  out.reserve(families_.size());
  for (const auto& f : families_) {
    FamilySnapshot snap{f->name, f->help, f->kind, {}};
    for (const auto& s : f->series) AppendSamples(*f, *s, snap.samples);
    out.push_back(std::move(snap));
  }
  return out;
}

std::string Registry::RenderText() const { return metrics::RenderText(Collect()); }

double Registry::Sum(std::string_view name, const Labels& match) const {
  double total = 0;
  for (const FamilySnapshot& f : Collect()) {
    for (const Sample& s : f.samples) {
      if (s.name == name && HasAll(s.labels, match)) total += s.value;
    }
  }
  return total;
}

}  // namespace bucketfs::metrics
