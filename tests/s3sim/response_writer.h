// Writes one HttpResponse to a socket: status line and headers, then the body
// straight from its buffer, paced to a per-connection ceiling when asked, and
// cut short on purpose when the response carries a BodyFault.
#ifndef TESTS_S3SIM_RESPONSE_WRITER_H_
#define TESTS_S3SIM_RESPONSE_WRITER_H_

#include <atomic>

#include "tests/s3sim/http_message.h"

namespace s3sim {

struct WriteOptions {
  int ttfb_ms = 0;
  double conn_mbps = 0;
  int stall_ms = 600000;
  const std::atomic<bool>* stopping = nullptr;
};

// Returns true when the connection may be reused (keep_alive and no error or
// fault); false means the caller must close it (for kReset the socket is set
// to send RST on close).
bool WriteResponse(int fd, const HttpResponse& resp, bool keep_alive, const WriteOptions& opt);

// Sends all of data (MSG_NOSIGNAL). Returns false on error.
bool SendAll(int fd, const char* data, size_t len);

}  // namespace s3sim

#endif  // TESTS_S3SIM_RESPONSE_WRITER_H_
