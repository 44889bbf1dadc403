// ClientConfig resolution (flags > environment > shared config file >
// defaults) and the Endpoint that turns (bucket, key) into host and path.
#include "s3/client_config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "s3/shared_config.h"
#include "s3/sigv4_signer.h"

namespace bucketfs::s3 {
namespace {

Error Invalid(std::string message) {
  return MakeError(EINVAL, "InvalidConfig", std::move(message));
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsIpv4(std::string_view host) {
  int dots = 0;
  int digits = 0;
  for (char c : host) {
    if (c == '.') {
      if (digits == 0) return false;
      ++dots;
      digits = 0;
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      if (++digits > 3) return false;
    } else {
      return false;
    }
  }
  return dots == 3 && digits > 0;
}

// Hosts that cannot take a "bucket." prefix: IP literals, and single-label
// names (localhost, a docker service name) that no DNS would resolve with one.
bool HostImpliesPathStyle(std::string_view host) {
  if (host.empty() || host.front() == '[' || IsIpv4(host)) return true;
  return host.find('.') == std::string_view::npos;
}

// Bucket names usable as a DNS label under virtual-hosted style.
bool DnsCompatibleBucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return bucket.front() != '-' && bucket.back() != '-' && bucket.find("..") == std::string::npos;
}

bool ValidHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

}  // namespace

Result<Endpoint> Endpoint::FromConfig(const ClientConfig& config) {
  Endpoint ep;
  if (config.endpoint_url.empty()) {
    ep.scheme = "https";
    ep.host = "s3." + config.region + ".amazonaws.com";
    ep.path_style = config.force_path_style;
    return ep;
  }
  const std::string& url = config.endpoint_url;
  const auto bad = [&url](const std::string& why) {
    return Invalid("invalid endpoint URL '" + url + "': " + why +
                   " (expected http[s]://host[:port][/base-path])");
  };
  const size_t sep = url.find("://");
  if (sep == std::string::npos) return bad("no scheme");
  ep.scheme = Lower(url.substr(0, sep));
  if (ep.scheme != "http" && ep.scheme != "https") return bad("scheme must be http or https");
  std::string_view rest = std::string_view(url).substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return bad("query strings and fragments are not allowed");
  }
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return bad("credentials in the URL are not supported");
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // IPv6 literal
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("garbage after IPv6 address");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (!std::all_of(host.begin(), host.end(), ValidHostChar)) {
      return bad("invalid character in host");
    }
  }
  if (host.empty() || host == "[]") return bad("empty host");
  ep.host = Lower(host);
  if (!port.empty() || authority.back() == ':') {
    int p = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) {
      return bad("port must be a number from 1 to 65535");
    }
    // The scheme's own port is left implicit so Host matches what curl sends.
    const int default_port = ep.scheme == "https" ? 443 : 80;
    ep.port = p == default_port ? 0 : p;
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  ep.base_path = std::string(path);
  ep.path_style = config.force_path_style || HostImpliesPathStyle(ep.host);
  return ep;
}

bool Endpoint::UsesPathStyleFor(const std::string& bucket) const {
  if (path_style || bucket.empty()) return true;
  if (!DnsCompatibleBucket(bucket)) return true;
  // "*.s3.amazonaws.com" certificates cover one label: a dotted bucket
  // would fail TLS verification under virtual-hosted style.
  return scheme == "https" && bucket.find('.') != std::string::npos;
}

// (Built with append/push_back: GCC 12 at -O3 misreports "lit" + string
// concatenations under -Wrestrict.)
std::string Endpoint::HostFor(const std::string& bucket) const {
  std::string h;
  if (!UsesPathStyleFor(bucket)) {
    h.append(bucket);
    h.push_back('.');
  }
  h.append(host);
  if (port != 0) {
    h.push_back(':');
    h.append(std::to_string(port));
  }
  return h;
}

std::string Endpoint::PathFor(const std::string& bucket, const std::string& key) const {
  std::string path = base_path;
  if (UsesPathStyleFor(bucket) && !bucket.empty()) {
    path.push_back('/');
    path.append(UriEncode(bucket, true));
    if (key.empty()) return path;
  }
  path.push_back('/');
  path.append(UriEncode(key, false));
  return path;
}

std::string Endpoint::Origin(const std::string& bucket) const {
  std::string origin = scheme;
  origin.append("://");
  origin.append(HostFor(bucket));
  return origin;
}

std::string Endpoint::UrlFor(const std::string& bucket, const std::string& key,
                             const std::vector<std::pair<std::string, std::string>>& query) const {
  std::string url = Origin(bucket);
  url.append(PathFor(bucket, key));
  if (!query.empty()) {
    url.push_back('?');
    url.append(CanonicalQueryString(query));
  }
  return url;
}

Result<ClientConfig> ResolveClientConfig(const ClientConfigOverrides& overrides,
                                         const EnvMap& env) {
  ClientConfig config;
  config.credentials.profile = overrides.profile.value_or("");
  config.credentials.no_sign_request = overrides.no_sign_request.value_or(false);

  const std::string profile = EffectiveProfile(config.credentials.profile, env);
  IniFile file;
  if (const std::string path = SharedConfigFilePath(env); !path.empty()) {
    auto r = ReadIniFile(path);
    if (!r.ok()) return r.error();
    file = std::move(r.value());
  }
  const IniSection* section = ConfigFileProfile(file, profile);

  // Endpoint: service-specific before global, environment before file.
  // AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true leaves only the flag.
  const bool ignore_configured =
      Lower(EnvValue(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS").value_or("")) == "true" ||
      Lower(IniValue(section, "ignore_configured_endpoint_urls").value_or("")) == "true";
  if (overrides.endpoint_url) {
    config.endpoint_url = *overrides.endpoint_url;
  } else if (!ignore_configured) {
    for (auto v : {EnvValue(env, "AWS_ENDPOINT_URL_S3"), EnvValue(env, "AWS_ENDPOINT_URL"),
                   IniValue(section, "s3.endpoint_url"), IniValue(section, "endpoint_url")}) {
      if (v) {
        config.endpoint_url = *v;
        break;
      }
    }
  }

  for (auto v : {overrides.region, EnvValue(env, "AWS_REGION"), EnvValue(env, "AWS_DEFAULT_REGION"),
                 IniValue(section, "region")}) {
    if (v && !v->empty()) {
      config.region = *v;
      break;
    }
  }
  if (config.region.empty() || !std::all_of(config.region.begin(), config.region.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
      })) {
    return Invalid("invalid region '" + config.region + "'");
  }

  if (overrides.force_path_style) {
    config.force_path_style = *overrides.force_path_style;
  } else if (auto style = IniValue(section, "s3.addressing_style")) {
    const std::string s = Lower(*style);
    if (s == "path") {
      config.force_path_style = true;
    } else if (s != "virtual" && s != "auto") {
      return Invalid("s3.addressing_style of profile '" + profile +
                     "' must be path, virtual or auto, got '" + *style + "'");
    }
  }

  if (overrides.ca_bundle) {
    config.ca_bundle = *overrides.ca_bundle;
  } else if (auto v = EnvValue(env, "AWS_CA_BUNDLE")) {
    config.ca_bundle = *v;
  } else if (auto f = IniValue(section, "ca_bundle")) {
    config.ca_bundle = *f;
  }
  if (!config.ca_bundle.empty() && access(config.ca_bundle.c_str(), R_OK) != 0) {
    return Invalid("CA bundle '" + config.ca_bundle + "' is not a readable file");
  }

  if (overrides.verify_tls) config.verify_tls = *overrides.verify_tls;
  if (overrides.max_attempts) config.max_attempts = *overrides.max_attempts;
  if (overrides.stall_timeout) config.low_speed_time = *overrides.stall_timeout;
  if (overrides.adaptive_rate) config.adaptive_rate = *overrides.adaptive_rate;

  // Reject a bad endpoint now, with the message, rather than on first use.
  if (auto ep = Endpoint::FromConfig(config); !ep.ok()) return ep.error();
  return config;
}

}  // namespace bucketfs::s3
