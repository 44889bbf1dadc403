// Error and Result<T>: the one error type that travels through every layer.
//
// An Error carries the errno the FUSE edge will reply with, decided where the
// error is created (NoSuchKey -> ENOENT, AccessDenied -> EACCES, a transport
// failure -> EIO, ...), plus what a human needs to diagnose it: the S3 error
// code, a message, the HTTP status and the request id. Nothing here throws;
// no exception crosses a thread or the C callback boundary.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace bucketfs {

struct Error {
  int errno_value = EIO;   // what the FUSE edge replies with
  std::string code;        // S3 error code ("NoSuchKey") or our own ("Transport")
  std::string message;     // human readable, never contains a secret
  int http_status = 0;     // 0 when no HTTP response was received
  std::string request_id;  // x-amz-request-id when the server sent one
  bool retryable = false;  // set by the classifier; read by the retry policy

  // "NoSuchKey (HTTP 404): The specified key does not exist. [request id X]"
  std::string ToString() const;
};

Error MakeError(int errno_value, std::string code, std::string message);

// Status: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)), ok_(false) {}  // NOLINT: implicit by design
  bool ok() const { return ok_; }
  const Error& error() const { return error_; }
  Error& error() { return error_; }
  static Status Ok() { return Status(); }

 private:
  Error error_;
  bool ok_ = true;
};

// Result<T>: a T or an Error. Implicit from either, like std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // REQUIRES: ok()
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  // REQUIRES: !ok()
  const Error& error() const { return std::get<1>(v_); }
  Error& error() { return std::get<1>(v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace bucketfs
