// HttpTransport: the seam between S3 logic and the network.
//
// A request goes in with a handler; the transport calls the handler from one
// of its own threads as the response arrives: OnHeaders once (status line and
// all headers), OnBody for each chunk of the body (straight from the socket
// buffer: a handler streams it into its final place, nothing is collected by
// the transport), then OnComplete exactly once with the transport outcome.
// The libcurl implementation (curl_transport.h) runs several threads, each with
// its own multi handle, and pools HTTP/1.1 connections; FakeHttpTransport
// (fake_http_transport.h) answers from a table for tests. No header other than
// curl_transport.cc includes <curl/curl.h>.
//
// Threading: handler callbacks for one request are serialized (never two at
// once) but may run on any transport thread. Handlers must not block. A
// request marked run_on_caller may instead run on the thread that submits
// it, its callbacks then all done before Submit returns.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/result.h"

namespace bucketfs::s3 {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive lookup; nullptr when absent.
const std::string* FindHeader(const HttpHeaders& headers, std::string_view name);

struct HttpRequest {
  std::string method;   // "GET", "PUT", "POST", "HEAD", "DELETE"
  std::string url;      // absolute, already percent-encoded
  HttpHeaders headers;  // sent as given (Authorization included)
  // Request body. The caller keeps the bytes alive until OnComplete.
  std::span<const std::byte> body;
  // A transfer slower than low_speed_bytes_per_sec for low_speed_time, or a
  // response that sends no byte for low_speed_time, is aborted as stalled
  // (error code "Stalled").
  std::chrono::seconds low_speed_time{30};
  long low_speed_bytes_per_sec = 1024;
  std::chrono::milliseconds connect_timeout{10000};
  // The caller's thread waits for this response anyway (a small read it must
  // answer): the transport may run the transfer on that thread, inside
  // Submit, on a connection of that thread's own. It saves two thread
  // handoffs per request (to a transport thread and back), which on a small
  // GET cost more CPU than the transfer itself. Only honoured for
  // a Submit without delay; the transport may still hand it to a thread of
  // its own (a cap on such connections), so the handler must work either way.
  bool run_on_caller = false;
};

class HttpResponseHandler {
 public:
  virtual ~HttpResponseHandler() = default;
  virtual void OnHeaders(int status, const HttpHeaders& headers) = 0;
  // Returns false to abort the transfer (OnComplete then gets code "Aborted").
  virtual bool OnBody(std::span<const std::byte> chunk) = 0;
  // Exactly once. ok(): a full response was received (any HTTP status).
  // !ok(): connection failed, reset, timed out, stalled, aborted, or the body
  // was shorter than its Content-Length; error().code says which.
  virtual void OnComplete(Status transport_status) = 0;
};

// Transport error codes (Error::code) shared by every HttpTransport, so the
// retry policy classifies them the same way for the real and the fake one.
namespace transport_code {
inline constexpr std::string_view kConnectFailed = "ConnectFailed";  // never reached the server
inline constexpr std::string_view kReset = "Reset";  // connection dropped mid-exchange
inline constexpr std::string_view kTimeout = "Timeout";
inline constexpr std::string_view kStalled = "Stalled";      // below the low-speed limit
inline constexpr std::string_view kTruncated = "Truncated";  // body shorter than Content-Length
inline constexpr std::string_view kAborted = "Aborted";      // a handler returned false
inline constexpr std::string_view kTls = "TLS";
inline constexpr std::string_view kShutdown = "Shutdown";    // transport destroyed
inline constexpr std::string_view kTransport = "Transport";  // anything else
}  // namespace transport_code

// An Error for a transport failure: errno EIO (ETIMEDOUT for Timeout and
// Stalled), retryable unless the code is Aborted or Shutdown.
Error MakeTransportError(std::string_view code, std::string message);

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Starts `request` after `delay` (used for retry backoff without blocking a
  // thread). The handler is kept alive until OnComplete returns. With
  // request.run_on_caller and no delay the whole transfer may run here.
  // REQUIRES: with run_on_caller, the caller holds no lock the handler takes.
  virtual void Submit(HttpRequest request, std::shared_ptr<HttpResponseHandler> handler,
                      std::chrono::milliseconds delay = std::chrono::milliseconds(0)) = 0;
};

}  // namespace bucketfs::s3
