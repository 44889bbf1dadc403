// RequestObserver: what the executor tells about each HTTP attempt, for
// metrics. s3/ does not know the metrics registry; the composition root
// passes an observer that counts (mount-tools/mount_metrics.h), tests pass
// their own or none. Calls come from transport threads and must be cheap
// and non-blocking.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace bucketfs::s3 {

// The S3 operation a request performs (several share an HTTP method).
enum class S3Op : uint8_t {
  kOther,
  kGet,
  kHead,
  kPut,
  kList,
  kDelete,
  kDeleteMulti,
  kCopy,
  kCreateMultipart,
  kUploadPart,
  kUploadPartCopy,
  kCompleteMultipart,
  kAbortMultipart,
  kListMultipart,
  kListBuckets,
  kCreateBucket,
};
inline constexpr int kS3OpCount = static_cast<int>(S3Op::kCreateBucket) + 1;

// "GET", "PUT", "HEAD", "LIST", "UPLOAD_PART", ...: label values.
std::string_view S3OpName(S3Op op);

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // An HTTP attempt is about to be submitted.
  virtual void OnAttemptStart(S3Op op) = 0;
  // It ended. http_status is 0 when no response arrived (connection failed,
  // reset, timed out); bytes_in counts body bytes received.
  virtual void OnAttemptEnd(S3Op op, int http_status, std::chrono::nanoseconds latency,
                            uint64_t bytes_in, uint64_t bytes_out) = 0;
  // A failed attempt will be tried again.
  virtual void OnRetry(S3Op op) = 0;
  // The store answered "too many requests" (503, 429, SlowDown).
  virtual void OnThrottled(S3Op /*op*/) {}
  // An attempt waits `delay` for its start slot (s3/request_pacer.h).
  virtual void OnPaced(std::chrono::nanoseconds /*delay*/) {}
  // A bucket's paced rate changed to `requests_per_second` (0: not paced).
  virtual void OnPaceRate(double /*requests_per_second*/) {}
};

}  // namespace bucketfs::s3
