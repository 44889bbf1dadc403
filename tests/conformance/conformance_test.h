// The client conformance suite: one set of S3 behaviours the client must get
// right, instantiated per backend (s3rver: independent implementation;
// s3sim: strict, ours). Servers legitimately differ, so each backend carries
// capability switches and a test that needs a capability skips, saying why,
// on backends without it (Arrow's GenericFileSystemTest idea).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "s3/object_client.h"
#include "tests/fixtures/s3_server_fixture.h"

namespace bucketfs::conformance {

struct Backend {
  std::string kind;               // "s3rver" | "s3sim"
  std::vector<std::string> args;  // extra server flags
  bool upload_part_copy = true;
  // Delimiter listing reports a prefix that holds only sub-prefixes.
  bool subprefix_only_prefixes = true;
  bool long_keys = true;               // 255..1024-byte keys
  bool checks_signatures = true;       // wrong secret -> 403
  bool conditional_get = true;         // If-Match honoured on GET
  bool one_byte_range_at_zero = true;  // "bytes=0-0" answered as one byte
  bool multipart_etag_suffix = true;   // multipart ETag ends in "-<parts>"
  bool list_multipart_uploads = true;  // and AbortMultipartUpload
  bool verifies_crc32c = true;         // wrong x-amz-checksum-crc32c -> 400 BadDigest
  uint64_t min_part_size = 5 << 20;

  friend std::ostream& operator<<(std::ostream& os, const Backend& b) { return os << b.kind; }
};

std::vector<Backend> AllBackends();

class ConformanceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  const Backend& backend() const { return GetParam(); }
  s3::ObjectClient& client() { return *client_; }
  const std::string& bucket() const { return bucket_; }
  testing::S3TestServer& server() { return *server_; }

  // Puts `data` at key; fails the test on error.
  void Put(const std::string& key, const std::vector<std::byte>& data);
  // HEAD + whole-object GET.
  Result<std::vector<std::byte>> Get(const std::string& key);
  // All keys under `prefix` (no delimiter), paging through.
  std::vector<std::string> ListAll(const std::string& prefix);

  testing::S3TestServer* server_ = nullptr;
  std::unique_ptr<s3::ObjectClient> client_;
  std::string bucket_;
};

std::vector<std::byte> RandomBytes(size_t n, uint64_t seed);
// "\"<hex md5>\"", as S3 computes a single-part ETag.
std::string QuotedMd5(const std::vector<std::byte>& data);

}  // namespace bucketfs::conformance
