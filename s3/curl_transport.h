// CurlTransport: the libcurl implementation of HttpTransport.
//
// N worker threads, each owning one CURLM multi handle (and so its own
// connection pool and DNS cache), its own queue of submitted requests
// (a mutex plus curl_multi_wakeup) and its own timer heap for delayed
// submits. Submit hands a request to the worker with the fewest requests in
// flight (atomic counters: no lock shared by all workers). Each worker loops
// curl_multi_poll / curl_multi_perform / curl_multi_info_read; easy handles
// are reused from a per-worker free list, connections from the multi
// handle's cache (HTTP/1.1 keep-alive).
//
// Body bytes go from curl's receive buffer straight to the handler's OnBody:
// no copy, no allocation and no lock per chunk. Request bodies are read from
// the caller's span (POST: passed by pointer; PUT: copied by curl's read
// callback into its upload buffer, which curl requires).
//
// A request marked run_on_caller (http_transport.h) runs inside Submit with
// curl_easy_perform on an easy handle of the calling thread's own (one kept
// connection per such thread, a 64 KiB receive buffer), at most
// max_connections at once; a transport thread or a handler nested in such a
// transfer hands it to a worker as usual.
//
// Every CURLcode becomes an Error in exactly one function (codes in
// http_transport.h). A body shorter than its Content-Length is an error
// ("Truncated"), never a short success. Destroying the transport stops the
// workers; requests still pending or in flight complete with "Shutdown".
// Only curl_transport.cc includes <curl/curl.h>.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "s3/http_transport.h"
#include "s3/result.h"

namespace bucketfs::s3 {

struct CurlTransportOptions {
  int threads = 0;  // 0 = hardware_concurrency; at least 2
  // Across all threads (each gets its share); transfers run on their
  // callers' threads (run_on_caller) may open as many again.
  int max_connections = 64;
  std::string ca_bundle;  // "" = system CAs
  bool verify_tls = true;
  std::string user_agent = "bucketfs/0.1";
  // CURLOPT_BUFFERSIZE: bigger reads, fewer callbacks. Measured on loopback
  // (1 GiB in 8 ranged GETs from s3sim): 16 KiB ~1.0, 128 KiB ~0.7,
  // 512 KiB ~0.3-0.45, 2 MiB ~0.3 CPU-s/GiB. Idle handles keep it allocated.
  long buffer_size = 512 * 1024;
  // Longest sleep of an idle worker in curl_multi_poll (curl's own timers
  // and a due delayed submit wake it sooner; a Submit or the destructor wakes
  // it at once). Nothing depends on it expiring: tests set it to an hour so
  // that a Submit that missed its wakeup is unmistakable.
  std::chrono::milliseconds idle_poll_timeout{1000};
};

// Initializes libcurl once per process (curl_global_init) and starts the
// workers. Fails when libcurl cannot initialize or ca_bundle is unreadable.
Result<std::unique_ptr<HttpTransport>> MakeCurlTransport(const CurlTransportOptions& options);

}  // namespace bucketfs::s3
