// The pieces of one curl transfer that the transport's threads share: the
// handle owners, the request in flight with its callbacks' state, setting a
// handle up for a request and reading its outcome. Part of the libcurl
// implementation (curl_transport.cc); nothing else includes it.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <memory>

#include "s3/curl_transport.h"
#include "s3/http_transport.h"

namespace bucketfs::s3::curl {

using Clock = std::chrono::steady_clock;

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// The one place where a CURLcode becomes an Error.
Error CurlCodeToError(CURLcode code, const char* detail);

struct Pending {
  HttpRequest request;
  std::shared_ptr<HttpResponseHandler> handler;
  Clock::time_point due;
};

// One request in flight on a worker. Owned by the worker's active_ set.
struct Transfer {
  HttpRequest request;
  std::shared_ptr<HttpResponseHandler> handler;
  EasyHandle easy;
  Slist headers;
  size_t upload_pos = 0;
  int status = 0;
  HttpHeaders response_headers;
  bool headers_delivered = false;
  bool aborted = false;  // the handler refused a chunk
  // Stall watch of the response (XferInfoCallback): when its last byte (a
  // header line or body bytes) arrived, zero before its status line; the
  // body bytes counted then; set when the watch gave up on it.
  Clock::time_point last_byte_at{};
  curl_off_t body_bytes_seen = 0;
  bool stalled = false;
  char errbuf[CURL_ERROR_SIZE] = {};

  void DeliverHeaders() {
    headers_delivered = true;
    handler->OnHeaders(status, response_headers);
  }
};

// Sets every option of `t`'s easy handle for its request (after a reset).
CURLcode Configure(const CurlTransportOptions& options, Transfer& t);

// The transport outcome of a transfer curl finished with `code`; delivers
// the headers first when curl saw no body to deliver them with.
Status Outcome(Transfer& t, CURLcode code);

}  // namespace bucketfs::s3::curl
