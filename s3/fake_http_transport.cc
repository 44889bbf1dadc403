#include "s3/fake_http_transport.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace bucketfs::s3 {
namespace {

// Path and query of an absolute URL ("http://h:1/b/k?x=1" -> "/b/k?x=1").
std::string_view PathOf(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return url;
  const size_t slash = url.find('/', scheme + 3);
  return slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
}

bool Matches(std::string_view target, std::string_view url) {
  if (!target.empty() && target[0] == '/') return PathOf(url).starts_with(target);
  return url.starts_with(target);
}

std::span<const std::byte> AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

std::string RecordedRequest::Header(std::string_view name) const {
  const std::string* v = FindHeader(headers, name);
  return v ? *v : std::string();
}

FakeHttpTransport::FakeHttpTransport(FakeTransportOptions options) : options_(options) {
  if (!options_.inline_mode) worker_ = std::thread([this] { WorkerLoop(); });
}

FakeHttpTransport::~FakeHttpTransport() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (worker_.joinable()) worker_.join();
}

void FakeHttpTransport::AddResponse(std::string method, std::string target, FakeResponse response) {
  MutexLock lock(mu_);
  for (Rule& r : rules_) {
    if (r.method == method && r.target == target && !r.responder) {
      r.script.push_back(std::move(response));
      return;
    }
  }
  Rule rule{std::move(method), std::move(target), {}, nullptr};
  rule.script.push_back(std::move(response));
  rules_.push_back(std::move(rule));
}

void FakeHttpTransport::AddResponder(std::string method, std::string target, Responder responder) {
  MutexLock lock(mu_);
  rules_.push_back(Rule{std::move(method), std::move(target), {}, std::move(responder)});
}

void FakeHttpTransport::Clear() {
  MutexLock lock(mu_);
  rules_.clear();
  recorded_.clear();
}

std::vector<RecordedRequest> FakeHttpTransport::requests() const {
  MutexLock lock(mu_);
  return recorded_;
}

size_t FakeHttpTransport::request_count() const {
  MutexLock lock(mu_);
  return recorded_.size();
}

void FakeHttpTransport::Submit(HttpRequest request, std::shared_ptr<HttpResponseHandler> handler,
                               std::chrono::milliseconds delay) {
  Job job;
  job.request.method = std::move(request.method);
  job.request.url = std::move(request.url);
  job.request.headers = std::move(request.headers);
  job.request.body.assign(reinterpret_cast<const char*>(request.body.data()), request.body.size());
  job.request.delay = delay;
  job.request.low_speed_time = request.low_speed_time;
  job.request.run_on_caller = request.run_on_caller;
  job.handler = std::move(handler);
  job.due =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay * options_.delay_scale);
  if (options_.inline_mode) {
    Run(job);
    return;
  }
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.NotifyAll();
}

void FakeHttpTransport::WorkerLoop() {
  MutexLock lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stop_) return;
      cv_.Wait(mu_);
      continue;
    }
    auto next = std::min_element(queue_.begin(), queue_.end(),
                                 [](const Job& a, const Job& b) { return a.due < b.due; });
    if (!stop_ && next->due > std::chrono::steady_clock::now()) {
      cv_.WaitUntil(mu_, next->due);
      continue;
    }
    Job job = std::move(*next);
    queue_.erase(next);
    lock.Unlock();
    Run(job);
    job.handler.reset();  // the handler may own the last reference to an operation
    lock.Lock();
  }
}

FakeResponse FakeHttpTransport::Answer(const RecordedRequest& request) {
  Responder responder;
  {
    MutexLock lock(mu_);
    recorded_.push_back(request);
    Rule* best = nullptr;
    for (Rule& r : rules_) {
      if (r.method != request.method || !Matches(r.target, request.url)) continue;
      if (!best || r.target.size() > best->target.size()) best = &r;
    }
    if (!best) {
      FakeResponse none;
      none.status = 501;
      none.body =
          "<?xml version=\"1.0\"?><Error><Code>NotImplemented</Code><Message>fake: no "
          "response for " +
          request.method + " " + request.url + "</Message></Error>";
      return none;
    }
    if (!best->responder) {
      FakeResponse r = best->script.front();
      if (best->script.size() > 1) best->script.pop_front();
      return r;
    }
    responder = best->responder;
  }
  return responder(request);  // outside the lock: it may inspect requests()
}

void FakeHttpTransport::Run(const Job& job) {
  FakeResponse r = Answer(job.request);
  HttpResponseHandler& h = *job.handler;
  if (!r.error_code.empty() && r.fail_after_bytes < 0) {
    h.OnComplete(MakeTransportError(r.error_code, "fake: " + r.error_code + " before response"));
    return;
  }
  if (!FindHeader(r.headers, "Content-Length")) {
    r.headers.emplace_back("Content-Length", std::to_string(r.body.size()));
  }
  h.OnHeaders(r.status, r.headers);
  std::string_view body = r.body;
  if (job.request.method == "HEAD") body = {};
  const bool fail = !r.error_code.empty();
  if (fail) body = body.substr(0, std::min<size_t>(body.size(), r.fail_after_bytes));
  const size_t chunk = std::max<size_t>(options_.chunk_size, 1);
  for (size_t pos = 0; pos < body.size(); pos += chunk) {
    if (!h.OnBody(AsBytes(body.substr(pos, chunk)))) {
      h.OnComplete(MakeTransportError(transport_code::kAborted, "fake: handler aborted"));
      return;
    }
  }
  if (fail) {
    h.OnComplete(MakeTransportError(r.error_code, "fake: " + r.error_code + " after " +
                                                      std::to_string(body.size()) + " bytes"));
    return;
  }
  h.OnComplete(Status::Ok());
}

FakeResponse FakeHttpTransport::RangedObject(const RecordedRequest& request,
                                             std::string_view object, const std::string& etag) {
  FakeResponse r;
  const std::string if_match = request.Header("If-Match");
  if (!if_match.empty() && if_match != etag) {
    r.status = 412;
    r.body =
        "<Error><Code>PreconditionFailed</Code><Message>At least one of the "
        "pre-conditions you specified did not hold</Message></Error>";
    return r;
  }
  r.headers.emplace_back("ETag", etag);
  const std::string range = request.Header("Range");
  const uint64_t size = object.size();
  if (range.empty() || !range.starts_with("bytes=")) {
    r.body = std::string(object);
    return r;
  }
  std::string_view spec = std::string_view(range).substr(6);
  const size_t dash = spec.find('-');
  uint64_t first = 0, last = size ? size - 1 : 0;
  std::from_chars(spec.data(), spec.data() + dash, first);
  if (dash + 1 < spec.size()) {
    std::from_chars(spec.data() + dash + 1, spec.data() + spec.size(), last);
  }
  if (first >= size) {
    r.status = 416;
    r.body =
        "<Error><Code>InvalidRange</Code><Message>The requested range is not "
        "satisfiable</Message></Error>";
    return r;
  }
  last = std::min(last, size - 1);
  r.status = 206;
  r.headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                              std::to_string(last) + "/" + std::to_string(size));
  r.body = std::string(object.substr(first, last - first + 1));
  return r;
}

}  // namespace bucketfs::s3
