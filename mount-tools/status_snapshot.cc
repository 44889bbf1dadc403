#include "mount-tools/status_snapshot.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bucketfs::tools {
namespace {

using metrics::FamilySnapshot;
using metrics::Sample;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

const std::string* Label(const Sample& s, std::string_view name) {
  for (const auto& l : s.labels) {
    if (l.name == name) return &l.value;
  }
  return nullptr;
}

double Get(const Snapshot& s, const std::string& key) {
  auto it = s.find(key);
  return it == s.end() ? 0 : std::strtod(it->second.c_str(), nullptr);
}

std::string Str(const Snapshot& s, const std::string& key) {
  auto it = s.find(key);
  return it == s.end() ? "" : it->second;
}

std::string Bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

bool IsAbsentNameLookup(const Sample& s) {
  const std::string* op = Label(s, "op");
  const std::string* err = Label(s, "errno");
  return op != nullptr && err != nullptr && *op == "lookup" && *err == "ENOENT";
}

}  // namespace

std::string StatusSnapshotText(const metrics::Registry& registry, const MountIdentity& id,
                               std::chrono::steady_clock::time_point now) {
  std::map<std::string, double> v;
  for (const FamilySnapshot& f : registry.Collect()) {
    for (const Sample& s : f.samples) {
      const std::string& n = s.name;
      if (n == "bucketfs_fuse_read_bytes_total") v["fuse_read_bytes"] += s.value;
      if (n == "bucketfs_fuse_write_bytes_total") v["fuse_write_bytes"] += s.value;
      if (n == "bucketfs_fuse_ops_total") v["fuse_ops"] += s.value;
      // A lookup answering ENOENT is how a name is found absent (every
      // create starts with one), not a failure an operator should see.
      if (n == "bucketfs_fuse_errors_total" && !IsAbsentNameLookup(s)) v["fuse_errors"] += s.value;
      if (n == "bucketfs_s3_requests_in_flight") v["s3_in_flight"] += s.value;
      if (n == "bucketfs_s3_retries_total") v["s3_retries"] += s.value;
      if (n == "bucketfs_memory_in_use_bytes") v["memory_bytes"] += s.value;
      if (n == "bucketfs_memory_limit_bytes") v["memory_limit_bytes"] += s.value;
      if (n == "bucketfs_uploads_in_flight") v["uploads_in_flight"] += s.value;
      if (n == "bucketfs_upload_memory_in_use_bytes") v["upload_memory_bytes"] += s.value;
      if (n == "bucketfs_upload_memory_limit_bytes") v["upload_memory_limit_bytes"] += s.value;
      if (n == "bucketfs_staging_bytes") v["staging_bytes"] += s.value;
      if (n == "bucketfs_s3_requests_total") {
        v["s3_requests"] += s.value;
        if (const std::string* op = Label(s, "op")) v["s3_requests." + *op] += s.value;
        const std::string* status = Label(s, "status");
        const int code = status != nullptr ? std::atoi(status->c_str()) : 0;
        if (code == 0 || code >= 500) v["s3_failed"] += s.value;
      }
      const std::string* result = Label(s, "result");
      if (n == "bucketfs_metadata_cache_lookups_total" && result != nullptr) {
        v[*result == "hit" ? "cache_hits" : "cache_misses"] += s.value;
      }
      if (n == "bucketfs_prefetch_reads_total" && result != nullptr) {
        v[*result == "hit" ? "prefetch_hits" : "prefetch_misses"] += s.value;
      }
    }
  }
  std::string out =
      "mountpoint=" + id.mountpoint + "\nsource=" + id.source + "\npid=" + std::to_string(id.pid) +
      "\nuptime_seconds=" + Num(std::chrono::duration<double>(now - id.started).count()) +
      "\ntime_ms=" +
      Num(std::chrono::duration<double, std::milli>(now.time_since_epoch()).count()) + "\n";
  for (const char* key :
       {"fuse_read_bytes", "fuse_write_bytes", "fuse_ops", "fuse_errors", "s3_requests",
        "s3_in_flight", "s3_failed", "s3_retries", "memory_bytes", "memory_limit_bytes",
        "upload_memory_bytes", "upload_memory_limit_bytes", "staging_bytes", "uploads_in_flight",
        "cache_hits", "cache_misses", "prefetch_hits", "prefetch_misses"}) {
    out += std::string(key) + "=" + Num(v[key]) + "\n";
  }
  for (const auto& [key, value] : v) {
    if (key.starts_with("s3_requests.") && value > 0) out += key + "=" + Num(value) + "\n";
  }
  return out;
}

std::string RenderStatus(const Snapshot& now, const Snapshot* before) {
  const double seconds =
      before != nullptr ? (Get(now, "time_ms") - Get(*before, "time_ms")) / 1000.0 : 0;
  auto rate = [&](const std::string& key) {
    return seconds > 0 && before != nullptr ? (Get(now, key) - Get(*before, key)) / seconds : 0.0;
  };
  char line[256];
  std::string out;
  std::snprintf(line, sizeof(line), "%s  %s  pid %s  up %ss\n", Str(now, "mountpoint").c_str(),
                Str(now, "source").c_str(), Str(now, "pid").c_str(),
                Str(now, "uptime_seconds").c_str());
  out += line;
  std::snprintf(line, sizeof(line), "  read     %9.1f MB/s   total %s\n",
                rate("fuse_read_bytes") / 1e6, Bytes(Get(now, "fuse_read_bytes")).c_str());
  out += line;
  std::snprintf(line, sizeof(line), "  written  %9.1f MB/s   total %s\n",
                rate("fuse_write_bytes") / 1e6, Bytes(Get(now, "fuse_write_bytes")).c_str());
  out += line;
  std::snprintf(line, sizeof(line), "  S3 requests  in flight %.0f  %.1f/s  total %.0f\n",
                Get(now, "s3_in_flight"), rate("s3_requests"), Get(now, "s3_requests"));
  out += line;
  std::string by_op = "   ";
  for (const auto& [key, value] : now) {
    if (!key.starts_with("s3_requests.")) continue;
    std::snprintf(line, sizeof(line), " %s %.1f/s (%s)", key.substr(12).c_str(), rate(key),
                  value.c_str());
    by_op += line;
  }
  if (by_op.size() > 3) out += by_op + "\n";
  std::snprintf(
      line, sizeof(line), "  errors  to the kernel %.0f  S3 failed %.0f  retries %.0f (%.1f/s)\n",
      Get(now, "fuse_errors"), Get(now, "s3_failed"), Get(now, "s3_retries"), rate("s3_retries"));
  out += line;
  std::snprintf(line, sizeof(line), "  memory  read-ahead %s of %s   uploads %s of %s\n",
                Bytes(Get(now, "memory_bytes")).c_str(),
                Bytes(Get(now, "memory_limit_bytes")).c_str(),
                Bytes(Get(now, "upload_memory_bytes")).c_str(),
                Bytes(Get(now, "upload_memory_limit_bytes")).c_str());
  out += line;
  std::snprintf(line, sizeof(line), "  uploads in flight %.0f   staged on disk %s\n",
                Get(now, "uploads_in_flight"), Bytes(Get(now, "staging_bytes")).c_str());
  out += line;
  std::snprintf(line, sizeof(line),
                "  cache   metadata hits %.0f misses %.0f   read-ahead hits %.0f misses %.0f\n",
                Get(now, "cache_hits"), Get(now, "cache_misses"), Get(now, "prefetch_hits"),
                Get(now, "prefetch_misses"));
  out += line;
  return out;
}

}  // namespace bucketfs::tools
