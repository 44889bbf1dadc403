#include "tests/s3sim/options.h"

#include <cstdlib>
#include <functional>
#include <map>

#include "tests/s3sim/util.h"

namespace s3sim {

std::string Usage() {
  return R"(usage: s3sim [flags]
Serving:
  --host ADDR            listen address (default 127.0.0.1)
  --port N               listen port; 0 picks a free one (default 0)
  --port-file PATH       write the chosen port to PATH once listening
  --max-conns N          serve at most N connections at once; others wait (default unlimited)
Auth:
  --access-key K         access key (default s3simkey)
  --secret-key S         secret key (default s3simsecret)
  --anonymous-ok         accept unsigned requests
  --region R             require this region in the credential scope (default: any)
Data:
  --bucket NAME          create bucket NAME (repeatable)
  --preload B/PREFIX:COUNT:SIZE   COUNT objects PREFIXobj-00000.. of SIZE random bytes (K/M/G)
  --seed N               seed for preload data and faults (default 1)
  --min-part-size SIZE   smallest non-last multipart part (default 5M)
  --body-pool SIZE       keep up to SIZE of freed upload buffers for reuse; 0: none (default 2G)
Shaping:
  --ttfb-ms N            delay before the first byte of each response
  --conn-mbps N          per-connection bandwidth ceiling in MB/s (10^6 bytes/s)
Faults (probabilities 0..1, drawn per request from --seed):
  --fail-rate P          answer 500 InternalError or 503 SlowDown
  --reset-rate P         cut the connection (RST) in the middle of a GET body
  --truncate-rate P      close after part of a GET body (short of Content-Length)
  --stall-rate P         stop sending a GET body (held for --stall-ms, default 600000)
  --lost-reply-rate P    carry the request out, then answer 500 InternalError
  --fault-ops LIST       comma-separated methods or operations that may fault (default all)
  --fault-log PATH       append one JSON line per injected fault
Throttling (503 SlowDown beyond the rate, counted as the fault "throttled" in stats):
  --rate-limit N         requests per second per bucket (default: no limit)
  --rate-burst N         requests a bucket may send at once above the rate (default N/10, >= 1)
  --rate-limit-per-prefix  limit each first key segment ("a/" of "a/b/c") on its own
Hostile (aimed at some keys, see hostile.h; repeatable):
  --hostile list-loop=PREFIX     listings under PREFIX repeat their continuation token
  --hostile wrong-range=SUBSTR   ranged GETs of matching keys answer the range 1 byte later
  --hostile short-body=SUBSTR    GETs of matching keys announce a Content-Length, send no body
Admin: GET /__s3sim/stats, POST /__s3sim/reset-stats, GET /__s3sim/health,
  POST /__s3sim/restart-faults (fault decisions start over, as at startup)
)";
}

std::optional<Options> ParseOptions(int argc, char** argv, std::string* message, int* exit_code) {
  Options o;
  std::string access = "s3simkey", secret = "s3simsecret";
  *exit_code = 2;
  auto bad = [&](const std::string& m) {
    *message = "s3sim: " + m + "\n" + Usage();
    return std::nullopt;
  };
  auto to_int = [](const std::string& v, int* out) {
    auto n = ParseU64(v);
    if (!n || *n > 1000000000) return false;
    *out = static_cast<int>(*n);
    return true;
  };
  auto to_double = [](const std::string& v, double* out) {
    char* end = nullptr;
    *out = std::strtod(v.c_str(), &end);
    return !v.empty() && end == v.c_str() + v.size() && *out >= 0;
  };
  using Setter = std::function<bool(const std::string&)>;
  std::map<std::string, Setter> with_value = {
      {"--host",
       [&](const std::string& v) {
         o.server.host = v;
         return true;
       }},
      {"--port", [&](const std::string& v) { return to_int(v, &o.server.port); }},
      {"--port-file",
       [&](const std::string& v) {
         o.port_file = v;
         return true;
       }},
      {"--max-conns", [&](const std::string& v) { return to_int(v, &o.server.max_conns); }},
      {"--access-key",
       [&](const std::string& v) {
         access = v;
         return !v.empty();
       }},
      {"--secret-key",
       [&](const std::string& v) {
         secret = v;
         return !v.empty();
       }},
      {"--region",
       [&](const std::string& v) {
         o.auth.region = v;
         return true;
       }},
      {"--bucket",
       [&](const std::string& v) {
         o.buckets.push_back(v);
         return !v.empty();
       }},
      {"--preload",
       [&](const std::string& v) {
         auto spec = ParsePreloadSpec(v);
         if (spec) o.preloads.push_back(*spec);
         return spec.has_value();
       }},
      {"--seed",
       [&](const std::string& v) {
         auto n = ParseU64(v);
         if (n) o.faults.seed = *n;
         return n.has_value();
       }},
      {"--min-part-size",
       [&](const std::string& v) {
         auto n = ParseSize(v);
         if (n) o.min_part_size = *n;
         return n.has_value();
       }},
      {"--body-pool",
       [&](const std::string& v) {
         auto n = ParseSize(v);
         if (n) o.body_pool_bytes = *n;
         return n.has_value();
       }},
      {"--ttfb-ms", [&](const std::string& v) { return to_int(v, &o.server.ttfb_ms); }},
      {"--conn-mbps", [&](const std::string& v) { return to_double(v, &o.server.conn_mbps); }},
      {"--stall-ms", [&](const std::string& v) { return to_int(v, &o.server.stall_ms); }},
      {"--threads", [&](const std::string& v) { return to_int(v, &o.threads); }},
      {"--rate-limit", [&](const std::string& v) { return to_double(v, &o.rate_limit.rate); }},
      {"--rate-burst", [&](const std::string& v) { return to_double(v, &o.rate_limit.burst); }},
      {"--fail-rate", [&](const std::string& v) { return to_double(v, &o.faults.fail_rate); }},
      {"--reset-rate", [&](const std::string& v) { return to_double(v, &o.faults.reset_rate); }},
      {"--truncate-rate",
       [&](const std::string& v) { return to_double(v, &o.faults.truncate_rate); }},
      {"--stall-rate", [&](const std::string& v) { return to_double(v, &o.faults.stall_rate); }},
      {"--lost-reply-rate",
       [&](const std::string& v) { return to_double(v, &o.faults.lost_reply_rate); }},
      {"--fault-ops",
       [&](const std::string& v) {
         size_t pos = 0;
         while (pos <= v.size()) {
           size_t comma = v.find(',', pos);
           if (comma == std::string::npos) comma = v.size();
           std::string item(Trim(std::string_view(v).substr(pos, comma - pos), kSpaceOrTab));
           if (!item.empty()) o.faults.ops.insert(item);
           pos = comma + 1;
         }
         return true;
       }},
      {"--hostile", [&](const std::string& v) { return AddHostileRule(o.hostile, v); }},
      {"--fault-log",
       [&](const std::string& v) {
         o.faults.log_path = v;
         return true;
       }},
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *message = Usage();
      *exit_code = 0;
      return std::nullopt;
    }
    if (arg == "--rate-limit-per-prefix") {
      o.rate_limit.per_prefix = true;
      continue;
    }
    if (arg == "--anonymous-ok") {
      o.auth.anonymous_ok = true;
      continue;
    }
    std::string value;
    size_t eq = arg.find('=');
    bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto it = with_value.find(arg);
    if (it == with_value.end()) return bad("unknown flag " + arg);
    if (!inline_value) {
      if (i + 1 >= argc) return bad(arg + " needs a value");
      value = argv[++i];
    }
    if (!it->second(value)) return bad("bad value for " + arg + ": " + value);
  }
  double total = o.faults.reset_rate + o.faults.truncate_rate + o.faults.stall_rate;
  if (o.faults.fail_rate > 1 || total > 1 || o.faults.lost_reply_rate > 1) {
    return bad("fault rates must be within 0..1");
  }
  o.auth.secrets[access] = secret;
  return o;
}

}  // namespace s3sim
