#include "s3/curl_transfer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "base/strings.h"

namespace bucketfs::s3::curl {

Error CurlCodeToError(CURLcode code, const char* detail) {
  namespace tc = transport_code;
  std::string_view kind = tc::kTransport;
  bool retryable = true;
  int errno_value = 0;  // 0: MakeTransportError's default
  const std::string_view d = detail ? detail : "";
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      kind = tc::kConnectFailed;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      // No overall timeout is set, so this is the low-speed limit or the
      // connect/resolve phase (which never reached the server).
      if (d.find("too slow") != std::string_view::npos) {
        kind = tc::kStalled;
      } else if (d.find("onnection timed out") != std::string_view::npos ||
                 d.find("esolving timed out") != std::string_view::npos) {
        kind = tc::kConnectFailed;
        errno_value = ETIMEDOUT;
      } else {
        kind = tc::kTimeout;
      }
      break;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      kind = tc::kReset;
      break;
    case CURLE_PARTIAL_FILE:
      kind = tc::kTruncated;
      break;
    case CURLE_WRITE_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
      kind = tc::kAborted;
      break;
    case CURLE_SSL_CONNECT_ERROR:
      kind = tc::kTls;  // handshake failure: may be transient
      break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      kind = tc::kTls;  // configuration or identity: retrying cannot help
      retryable = false;
      break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
      retryable = false;
      errno_value = EINVAL;
      break;
    case CURLE_OUT_OF_MEMORY:
      retryable = false;
      errno_value = ENOMEM;
      break;
    default:
      break;
  }
  std::string message = curl_easy_strerror(code);
  if (!d.empty()) message += ": " + std::string(d);
  Error e = MakeTransportError(kind, std::move(message));
  if (errno_value != 0) e.errno_value = errno_value;
  e.retryable = e.retryable && retryable;
  return e;
}

namespace {

size_t HeaderCallback(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  t->last_byte_at = Clock::now();
  std::string_view line(data, len);
  if (line.starts_with("HTTP/")) {  // a new response (after 1xx): start over
    t->response_headers.clear();
    t->headers_delivered = false;
    const size_t sp = line.find(' ');
    t->status = 0;
    if (sp != std::string_view::npos && sp + 4 <= line.size()) {
      std::from_chars(line.data() + sp + 1, line.data() + sp + 4, t->status);
    }
    return len;
  }
  if (base::Trim(line).empty()) {  // end of a header block
    if (t->status >= 200 && !t->headers_delivered) t->DeliverHeaders();
    return len;
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response_headers.emplace_back(std::string(base::Trim(line.substr(0, colon))),
                                     std::string(base::Trim(line.substr(colon + 1))));
  }
  return len;
}

size_t WriteCallback(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (!t->headers_delivered) t->DeliverHeaders();
  if (!t->handler->OnBody({reinterpret_cast<const std::byte*>(data), len})) {
    t->aborted = true;
    return 0;  // != len: curl fails the transfer with CURLE_WRITE_ERROR
  }
  return len;
}

// Aborts a response that sent nothing for low_speed_time. curl's own
// low-speed limit judges a speed averaged over its last five seconds, so a
// body that stops after a fast start is only given up seconds after
// low_speed_time; this watch gives it up on time, to the second (curl calls
// it at least once a second). Before the response begins (upload, server
// at work) curl's limit alone applies.
int XferInfoCallback(void* user, curl_off_t /*dltotal*/, curl_off_t dlnow, curl_off_t /*ultotal*/,
                     curl_off_t /*ulnow*/) {
  auto* t = static_cast<Transfer*>(user);
  if (t->last_byte_at == Clock::time_point{}) return 0;
  const Clock::time_point now = Clock::now();
  if (dlnow != t->body_bytes_seen) {
    t->body_bytes_seen = dlnow;
    t->last_byte_at = now;
    return 0;
  }
  if (now - t->last_byte_at < t->request.low_speed_time) return 0;
  t->stalled = true;
  return 1;  // curl ends the transfer with CURLE_ABORTED_BY_CALLBACK
}

size_t ReadCallback(char* buffer, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const auto body = t->request.body;
  const size_t len = std::min(size * n, body.size() - t->upload_pos);
  std::memcpy(buffer, body.data() + t->upload_pos, len);
  t->upload_pos += len;
  return len;
}

int SeekCallback(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > t->request.body.size()) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  t->upload_pos = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

}  // namespace

CURLcode Configure(const CurlTransportOptions& options, Transfer& t) {
  CURL* h = t.easy.get();
  const HttpRequest& r = t.request;
  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption opt, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(h, opt, value);
  };
  set(CURLOPT_URL, r.url.c_str());
  set(CURLOPT_PRIVATE, static_cast<void*>(&t));
  set(CURLOPT_ERRORBUFFER, t.errbuf);
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_1_1});
  set(CURLOPT_PATH_AS_IS, 1L);  // keys like "a/../b" must reach S3 unchanged
  set(CURLOPT_TCP_NODELAY, 1L);
  set(CURLOPT_TCP_KEEPALIVE, 1L);
  set(CURLOPT_TCP_KEEPIDLE, 60L);
  set(CURLOPT_TCP_KEEPINTVL, 30L);
  set(CURLOPT_BUFFERSIZE, options.buffer_size);
  set(CURLOPT_UPLOAD_BUFFERSIZE, std::min(options.buffer_size, 2L * 1024 * 1024));
  set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout.count()));
  set(CURLOPT_LOW_SPEED_LIMIT, r.low_speed_bytes_per_sec);
  set(CURLOPT_LOW_SPEED_TIME, static_cast<long>(r.low_speed_time.count()));
  if (r.low_speed_time.count() > 0) {
    set(CURLOPT_NOPROGRESS, 0L);
    set(CURLOPT_XFERINFOFUNCTION, XferInfoCallback);
    set(CURLOPT_XFERINFODATA, static_cast<void*>(&t));
  }
  set(CURLOPT_SSL_VERIFYPEER, options.verify_tls ? 1L : 0L);
  set(CURLOPT_SSL_VERIFYHOST, options.verify_tls ? 2L : 0L);
  if (!options.ca_bundle.empty()) set(CURLOPT_CAINFO, options.ca_bundle.c_str());
  if (!options.user_agent.empty()) set(CURLOPT_USERAGENT, options.user_agent.c_str());
  set(CURLOPT_HEADERFUNCTION, HeaderCallback);
  set(CURLOPT_HEADERDATA, static_cast<void*>(&t));
  set(CURLOPT_WRITEFUNCTION, WriteCallback);
  set(CURLOPT_WRITEDATA, static_cast<void*>(&t));

  const bool has_body = !r.body.empty();
  if (r.method == "GET") {
    set(CURLOPT_HTTPGET, 1L);
  } else if (r.method == "HEAD") {
    set(CURLOPT_NOBODY, 1L);
  } else if (r.method == "PUT") {
    set(CURLOPT_UPLOAD, 1L);
    set(CURLOPT_READFUNCTION, ReadCallback);
    set(CURLOPT_READDATA, static_cast<void*>(&t));
    set(CURLOPT_SEEKFUNCTION, SeekCallback);
    set(CURLOPT_SEEKDATA, static_cast<void*>(&t));
    set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  } else {
    if (r.method == "POST" || has_body) {
      // Sent from the caller's buffer without a copy (not COPYPOSTFIELDS).
      set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      set(CURLOPT_POSTFIELDS, has_body ? reinterpret_cast<const char*>(r.body.data()) : "");
    }
    if (r.method != "POST") set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }

  // Headers: as given; an empty value is sent as "Name;" (curl's syntax).
  curl_slist* list = nullptr;
  auto add = [&list](const std::string& line) {
    curl_slist* next = curl_slist_append(list, line.c_str());
    if (next) list = next;
  };
  for (const auto& [name, value] : r.headers) {
    add(value.empty() ? name + ";" : name + ": " + value);
  }
  add("Expect:");  // no 100-continue round trip
  if ((r.method == "POST" || r.method == "PUT") && !FindHeader(r.headers, "Content-Type")) {
    add("Content-Type:");  // no form-urlencoded default
  }
  t.headers.reset(list);
  set(CURLOPT_HTTPHEADER, list);
  return rc;
}

Status Outcome(Transfer& t, CURLcode code) {
  if (code == CURLE_OK) {
    if (!t.headers_delivered) {
      long status = 0;
      curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &status);
      t.status = static_cast<int>(status);
      t.DeliverHeaders();
    }
    return Status::Ok();
  }
  if (t.stalled) {
    return MakeTransportError(transport_code::kStalled,
                              "Operation too slow. No byte of the response for " +
                                  std::to_string(t.request.low_speed_time.count()) + " seconds");
  }
  if (t.aborted)
    return MakeTransportError(transport_code::kAborted, "the response handler stopped");
  return CurlCodeToError(code, t.errbuf);
}

}  // namespace bucketfs::s3::curl
