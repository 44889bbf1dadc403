#include "metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace bucketfs::metrics {
namespace {

std::string_view TypeName(Kind k) {
  switch (k) {
    case Kind::kCounter:
      return "counter";
    case Kind::kGauge:
      return "gauge";
    case Kind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

void AppendSample(const Sample& s, std::string& out) {
  out += s.name;
  if (!s.labels.empty()) {
    out += '{';
    for (size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) out += ',';
      out += s.labels[i].name;
      out += "=\"";
      out += EscapeLabelValue(s.labels[i].value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += FormatValue(s.value);
  out += '\n';
}

}  // namespace

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Counts up to 2^53 are exact in a double: print them as integers.
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    return std::to_string(static_cast<long long>(v));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string RenderText(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const FamilySnapshot& f : families) {
    if (f.samples.empty()) continue;  // a family with no series says nothing
    out += "# HELP ";
    out += f.name;
    out += ' ';
    out += EscapeHelp(f.help);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += TypeName(f.kind);
    out += '\n';
    for (const Sample& s : f.samples) AppendSample(s, out);
  }
  return out;
}

}  // namespace bucketfs::metrics
