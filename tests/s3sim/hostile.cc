// Misbehaviours on purpose: see hostile.h.
#include "tests/s3sim/hostile.h"

#include "tests/s3sim/util.h"
#include "tests/s3sim/xml_writer.h"

namespace s3sim {

bool AddHostileRule(HostileConfig& config, const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq + 1 == spec.size()) return false;
  std::string kind = spec.substr(0, eq);
  if (kind != "list-loop" && kind != "wrong-range" && kind != "short-body") return false;
  config.rules.emplace_back(std::move(kind), spec.substr(eq + 1));
  return true;
}

std::string HostileKind(const HostileConfig& config, const S3Request& r) {
  for (const auto& [kind, match] : config.rules) {
    if (kind == "list-loop" && r.op == "ListObjectsV2" && r.Q("prefix").rfind(match, 0) == 0) {
      return kind;
    }
    if (r.op != "GetObject" || r.key.find(match) == std::string::npos) continue;
    if (kind == "wrong-range" && r.Header("range") != nullptr) return kind;
    if (kind == "short-body") return kind;
  }
  return "";
}

std::optional<HttpResponse> HostileBefore(const std::string& kind, S3Request& r) {
  if (kind == "list-loop") {
    const std::string token = r.Has("continuation-token") ? r.Q("continuation-token") : "again";
    XmlWriter xml("ListBucketResult");
    xml.Elem("Name", r.bucket);
    xml.Elem("Prefix", r.Q("prefix"));
    xml.Elem("KeyCount", 0LL);
    xml.Elem("IsTruncated", true);
    if (r.Has("continuation-token")) xml.Elem("ContinuationToken", token);
    xml.Elem("NextContinuationToken", token);
    return XmlResponse(200, xml.Finish());
  }
  if (kind == "wrong-range") {
    for (auto& [name, value] : r.http->headers) {
      if (name != "range") continue;
      // "bytes=A-B" -> "bytes=A+1-B+1"; other forms are left alone.
      const size_t dash = value.find('-');
      if (value.rfind("bytes=", 0) != 0 || dash == std::string::npos) break;
      auto first = ParseU64(value.substr(6, dash - 6));
      auto last = ParseU64(value.substr(dash + 1));
      if (first && last)
        value = "bytes=" + std::to_string(*first + 1) + "-" + std::to_string(*last + 1);
    }
  }
  return std::nullopt;
}

void HostileAfter(const std::string& kind, HttpResponse& resp) {
  if (kind != "short-body" || (resp.status != 200 && resp.status != 206)) return;
  // Nothing of the body: a client that resumes after each cut cannot creep to the end.
  resp.fault.kind = BodyFault::Kind::kTruncate;
  resp.fault.cut_at = 0;
}

}  // namespace s3sim
