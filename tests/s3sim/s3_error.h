// An S3 error as the handlers answer it: HTTP status, S3 error code, message.
#ifndef TESTS_S3SIM_S3_ERROR_H_
#define TESTS_S3SIM_S3_ERROR_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace s3sim {

struct S3Error {
  int status = 500;
  std::string code;
  std::string message;
};

// A value or an S3Error.
template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Expected(S3Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  T& operator*() { return std::get<0>(v_); }
  const T& operator*() const { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const S3Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, S3Error> v_;
};

inline S3Error NoSuchBucket() {
  return {404, "NoSuchBucket", "The specified bucket does not exist"};
}
inline S3Error NoSuchKey() { return {404, "NoSuchKey", "The specified key does not exist."}; }
inline S3Error NoSuchUpload() {
  return {404, "NoSuchUpload", "The specified multipart upload does not exist."};
}

}  // namespace s3sim

#endif  // TESTS_S3SIM_S3_ERROR_H_
