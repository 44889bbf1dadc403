#include "s3/curl_transport.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace bucketfs::s3 {
namespace {

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
  char errbuf[CURL_ERROR_SIZE] = {};

  void DeliverHeaders() {
    headers_delivered = true;
    handler->OnHeaders(status, response_headers);
  }
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

size_t HeaderCallback(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
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
  if (Trim(line).empty()) {  // end of a header block
    if (t->status >= 200 && !t->headers_delivered) t->DeliverHeaders();
    return len;
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response_headers.emplace_back(std::string(Trim(line.substr(0, colon))),
                                     std::string(Trim(line.substr(colon + 1))));
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

// Sets every option of `t`'s easy handle for its request (after a reset).
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

// The transport outcome of a transfer curl finished with `code`; delivers
// the headers first when curl saw no body to deliver them with.
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
  if (t.aborted)
    return MakeTransportError(transport_code::kAborted, "the response handler stopped");
  return CurlCodeToError(code, t.errbuf);
}

// Transfers run on their caller's thread (HttpRequest::run_on_caller) use an
// easy handle of that thread's own, and so a connection of its own, kept
// between its requests. A transport thread never runs one: it would stall
// every other transfer of its multi handle for the duration.
struct CallerSlot {
  EasyHandle easy;
  bool busy = false;  // a transfer of this thread is running on it
};
thread_local CallerSlot caller_slot;
thread_local bool on_transport_thread = false;

// Receive buffer of a caller's handle: such transfers are small reads, and
// each thread that ever ran one keeps its handle (and buffer) until it exits.
constexpr long kCallerBufferSize = 64 * 1024;

class Worker {
 public:
  Worker(const CurlTransportOptions& options, long max_connections)
      : options_(options),
        max_free_handles_(static_cast<size_t>(std::max(4L, max_connections))),
        multi_(curl_multi_init()) {
    curl_multi_setopt(multi_.get(), CURLMOPT_MAX_HOST_CONNECTIONS, max_connections);
    curl_multi_setopt(multi_.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, max_connections);
    curl_multi_setopt(multi_.get(), CURLMOPT_MAXCONNECTS, std::max(2 * max_connections, 16L));
    curl_multi_setopt(multi_.get(), CURLMOPT_PIPELINING, long{CURLPIPE_NOTHING});
    if (multi_) thread_ = std::thread([this] { Loop(); });
  }

  ~Worker() {
    RequestStop();
    Join();
  }

  // Stopping is two-phase so that no worker is destroyed while another one's
  // completions may still Submit into it: first all stop, then all join.
  void RequestStop() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    if (thread_.joinable()) curl_multi_wakeup(multi_.get());
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  bool ok() const { return multi_ != nullptr; }
  int load() const { return load_.load(std::memory_order_relaxed); }

  void Enqueue(Pending p) {
    load_.fetch_add(1, std::memory_order_relaxed);
    bool wake = false;
    bool queued = false;
    {
      MutexLock lock(mu_);
      if (!stop_) {
        incoming_.push_back(std::move(p));
        queued = true;
        // Only a worker asleep in curl_multi_poll needs waking, and only
        // once: an awake one takes the queue before it polls again. Waking
        // for every request cost a send on curl's socketpair, a drain and a
        // loop pass per request; 16 READs in flight from FUSE threads came
        // one at a time (issue 5).
        wake = polling_;
        polling_ = false;
      }
    }
    if (!queued) {  // stopping: never started
      p.handler->OnComplete(MakeTransportError(transport_code::kShutdown, "transport stopped"));
      load_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    if (wake) curl_multi_wakeup(multi_.get());
  }

 private:
  static bool DueLater(const Pending& a, const Pending& b) { return a.due > b.due; }

  void Loop() {
    on_transport_thread = true;
    std::vector<Pending> batch;
    for (;;) {
      {
        MutexLock lock(mu_);
        if (stop_) break;
        batch.swap(incoming_);
      }
      Clock::time_point now = Clock::now();
      for (Pending& p : batch) {
        if (p.due > now) {
          timers_.push_back(std::move(p));
          std::push_heap(timers_.begin(), timers_.end(), DueLater);
        } else {
          Start(std::move(p));
        }
      }
      batch.clear();
      while (!timers_.empty() && timers_.front().due <= now) {
        std::pop_heap(timers_.begin(), timers_.end(), DueLater);
        Pending p = std::move(timers_.back());
        timers_.pop_back();
        Start(std::move(p));
      }
      int running = 0;
      curl_multi_perform(multi_.get(), &running);
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        Transfer* t = nullptr;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
        Complete(t, msg->data.result);
      }
      int timeout_ms = static_cast<int>(std::clamp<int64_t>(options_.idle_poll_timeout.count(), 0,
                                                            std::numeric_limits<int>::max()));
      if (!timers_.empty()) {
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                              timers_.front().due - Clock::now())
                              .count() +
                          1;
        timeout_ms = static_cast<int>(std::clamp<int64_t>(wait, 0, timeout_ms));
      }
      {
        MutexLock lock(mu_);
        if (stop_) break;
        if (!incoming_.empty()) continue;  // submitted meanwhile: no sleep
        polling_ = true;                   // from here on a Submit wakes the poll below
      }
      curl_multi_poll(multi_.get(), nullptr, 0, timeout_ms, nullptr);
      MutexLock lock(mu_);
      polling_ = false;
    }
    Shutdown();
  }

  // Everything not finished completes with "Shutdown".
  void Shutdown() {
    std::vector<Transfer*> active(active_.begin(), active_.end());
    for (Transfer* t : active) {
      curl_multi_remove_handle(multi_.get(), t->easy.get());
      Finish(t, MakeTransportError(transport_code::kShutdown, "transport stopped"));
    }
    {
      MutexLock lock(mu_);
      for (Pending& p : incoming_) timers_.push_back(std::move(p));
      incoming_.clear();
    }
    for (Pending& p : timers_) {
      p.handler->OnComplete(MakeTransportError(transport_code::kShutdown, "transport stopped"));
      load_.fetch_sub(1, std::memory_order_relaxed);
    }
    timers_.clear();
  }

  void Start(Pending p) {
    auto t = std::make_unique<Transfer>();
    t->request = std::move(p.request);
    t->handler = std::move(p.handler);
    if (!free_easy_.empty()) {
      t->easy = std::move(free_easy_.back());
      free_easy_.pop_back();
      curl_easy_reset(t->easy.get());
    } else {
      t->easy.reset(curl_easy_init());
    }
    if (!t->easy) {
      t->handler->OnComplete(CurlCodeToError(CURLE_OUT_OF_MEMORY, "curl_easy_init failed"));
      load_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    const CURLcode rc = Configure(options_, *t);
    Transfer* raw = t.release();
    active_.insert(raw);
    if (rc != CURLE_OK) {
      Finish(raw, CurlCodeToError(rc, "setting up the request"));
      return;
    }
    if (curl_multi_add_handle(multi_.get(), raw->easy.get()) != CURLM_OK) {
      Finish(raw, CurlCodeToError(CURLE_OUT_OF_MEMORY, "curl_multi_add_handle failed"));
    }
  }

  void Complete(Transfer* t, CURLcode code) {
    curl_multi_remove_handle(multi_.get(), t->easy.get());
    Status status = Outcome(*t, code);
    Finish(t, std::move(status));
  }

  // Hands the outcome to the handler and recycles the easy handle.
  void Finish(Transfer* raw, Status status) {
    std::unique_ptr<Transfer> t(raw);
    active_.erase(raw);
    std::shared_ptr<HttpResponseHandler> handler = std::move(t->handler);
    if (t->easy && free_easy_.size() < max_free_handles_) free_easy_.push_back(std::move(t->easy));
    // Not busy any more before the handler runs: a follow-up request it
    // submits (or its caller's next one) should come back to this worker and
    // its warm connection.
    load_.fetch_sub(1, std::memory_order_relaxed);
    handler->OnComplete(std::move(status));
  }

  const CurlTransportOptions& options_;
  // An idle easy handle keeps its receive buffer (buffer_size bytes), so
  // keep only about as many as this worker can have connections.
  const size_t max_free_handles_;
  MultiHandle multi_;
  std::atomic<int> load_{0};  // submitted and not yet completed
  Mutex mu_;
  std::vector<Pending> incoming_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  // In (or about to enter) curl_multi_poll with incoming_ seen empty, and
  // not woken since.
  bool polling_ GUARDED_BY(mu_) = false;
  // Worker thread only:
  std::vector<Pending> timers_;  // min-heap by due time
  std::unordered_set<Transfer*> active_;
  std::vector<EasyHandle> free_easy_;
  std::thread thread_;
};

class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(CurlTransportOptions options) : options_(std::move(options)) {
    int n = options_.threads > 0 ? options_.threads
                                 : static_cast<int>(std::thread::hardware_concurrency());
    n = std::max(n, 2);
    const long per_thread = std::max<long>(1, options_.max_connections / n);
    for (int i = 0; i < n; ++i) workers_.push_back(std::make_unique<Worker>(options_, per_thread));
  }

  ~CurlTransport() override {
    for (auto& w : workers_) w->RequestStop();
    for (auto& w : workers_) w->Join();
  }

  bool ok() const {
    return std::all_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->ok(); });
  }

  void Submit(HttpRequest request, std::shared_ptr<HttpResponseHandler> handler,
              std::chrono::milliseconds delay) override {
    if (request.run_on_caller && delay.count() <= 0 && RunOnCaller(request, handler)) return;
    // Least busy worker; ties go to the lowest index so that a lone client
    // keeps reusing the same connections.
    Worker* best = workers_[0].get();
    int best_load = best->load();
    for (size_t i = 1; i < workers_.size() && best_load > 0; ++i) {
      const int l = workers_[i]->load();
      if (l < best_load) {
        best = workers_[i].get();
        best_load = l;
      }
    }
    best->Enqueue(Pending{std::move(request), std::move(handler), Clock::now() + delay});
  }

 private:
  // Runs the whole transfer here with this thread's handle; false (request
  // and handler untouched) when it may not: on a transport thread, from a
  // handler of this thread's own transfer, or with max_connections such
  // transfers already running.
  bool RunOnCaller(HttpRequest& request, std::shared_ptr<HttpResponseHandler>& handler) {
    if (on_transport_thread || caller_slot.busy) return false;
    if (on_caller_.fetch_add(1, std::memory_order_relaxed) >= options_.max_connections) {
      on_caller_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    if (!caller_slot.easy) caller_slot.easy.reset(curl_easy_init());
    if (!caller_slot.easy) {
      on_caller_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    caller_slot.busy = true;
    Transfer t;
    t.request = std::move(request);
    t.handler = std::move(handler);
    t.easy = std::move(caller_slot.easy);
    CURLcode rc = Configure(options_, t);
    if (rc == CURLE_OK) rc = curl_easy_setopt(t.easy.get(), CURLOPT_BUFFERSIZE, kCallerBufferSize);
    Status status = rc == CURLE_OK ? Outcome(t, curl_easy_perform(t.easy.get()))
                                   : CurlCodeToError(rc, "setting up the request");
    // Reset now: the handle must not keep pointers into `t` (error buffer,
    // header list) past this call. Its connection stays open for the next.
    curl_easy_reset(t.easy.get());
    caller_slot.easy = std::move(t.easy);
    caller_slot.busy = false;
    on_caller_.fetch_sub(1, std::memory_order_relaxed);
    // Last, as on a transport thread: the handler may submit a follow-up.
    t.handler->OnComplete(std::move(status));
    return true;
  }

  const CurlTransportOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<int> on_caller_{0};  // transfers running on their callers' threads
};

}  // namespace

Result<std::unique_ptr<HttpTransport>> MakeCurlTransport(const CurlTransportOptions& options) {
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (init != CURLE_OK) return CurlCodeToError(init, "curl_global_init");
  if (!options.ca_bundle.empty() && access(options.ca_bundle.c_str(), R_OK) != 0) {
    return MakeError(ENOENT, "InvalidConfig", "CA bundle not readable: " + options.ca_bundle);
  }
  auto transport = std::make_unique<CurlTransport>(options);
  if (!transport->ok()) return MakeError(ENOMEM, "Transport", "curl_multi_init failed");
  return std::unique_ptr<HttpTransport>(std::move(transport));
}

}  // namespace bucketfs::s3
