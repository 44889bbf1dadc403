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
#include "s3/curl_transfer.h"

namespace bucketfs::s3 {
namespace {

using curl::Clock;
using curl::Configure;
using curl::CurlCodeToError;
using curl::EasyHandle;
using curl::MultiHandle;
using curl::Outcome;
using curl::Pending;
using curl::Transfer;

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
        // once: an awake one takes the queue before it polls again, and a
        // wake per request would serialize requests behind curl's socketpair.
        wake = polling_;
        polling_ = false;
      }
    }
    if (!queued) {  // stopping: never started
      // NOLINTNEXTLINE(bugprone-use-after-move): p was moved only when queued.
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
