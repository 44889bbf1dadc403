// The Prometheus text exposition format, version 0.0.4: one "# HELP" and one
// "# TYPE" line per family, then one line per sample,
// `name{label="value",...} value`. Pure functions, unit-tested.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrics/registry.h"

namespace bucketfs::metrics {

// The Content-Type a scrape answer carries.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string RenderText(const std::vector<FamilySnapshot>& families);

// A label value with \, " and newline escaped.
std::string EscapeLabelValue(std::string_view v);
// HELP text with \ and newline escaped.
std::string EscapeHelp(std::string_view v);
// Integers without a fraction, others in the shortest exact form; +Inf, -Inf, NaN.
std::string FormatValue(double v);

}  // namespace bucketfs::metrics
