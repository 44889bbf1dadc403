#include <openssl/evp.h>

#include <random>

#include "tests/conformance/conformance_test.h"

namespace bucketfs::conformance {

std::vector<Backend> AllBackends() {
  Backend s3rver;
  s3rver.kind = "s3rver";
  s3rver.upload_part_copy = false;         // not implemented by s3rver
  s3rver.subprefix_only_prefixes = false;  // its delimiter listing drops them
  s3rver.long_keys = false;                // 255-byte key names crash it (file names)
  s3rver.checks_signatures = false;        // accepts any signature for its account
  s3rver.conditional_get = false;          // ignores If-Match on GET
  s3rver.one_byte_range_at_zero = false;   // answers bytes=0-0 with the whole object
  s3rver.multipart_etag_suffix = false;    // plain MD5 ETag after CompleteMultipartUpload
  s3rver.list_multipart_uploads = false;   // 501 NotImplemented; abort gives 405
  s3rver.verifies_crc32c = false;          // ignores x-amz-checksum-* (accepts a corrupted body)
  s3rver.min_part_size = 5 << 20;
  Backend s3sim;
  s3sim.kind = "s3sim";
  s3sim.args = {"--min-part-size", "1024"};
  s3sim.min_part_size = 1024;
  return {s3rver, s3sim};
}

void ConformanceTest::SetUp() {
  auto server = testing::S3ServerEnvironment::Get().Server(backend().kind, backend().args);
  BUCKETFS_REQUIRE_SERVER(server);
  server_ = *server;
  auto client = server_->MakeClient();
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  client_ = std::move(client).value();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  bucket_ = testing::UniqueBucketName(info->name());
  Status created = client_->CreateBucket({bucket_});
  ASSERT_TRUE(created.ok()) << created.error().ToString();
}

void ConformanceTest::TearDown() { client_.reset(); }

void ConformanceTest::Put(const std::string& key, const std::vector<std::byte>& data) {
  s3::PutObjectParams p;
  p.bucket = bucket_;
  p.key = key;
  auto r = client_->PutObject(p, data);
  ASSERT_TRUE(r.ok()) << key << ": " << r.error().ToString();
}

Result<std::vector<std::byte>> ConformanceTest::Get(const std::string& key) {
  auto head = client_->HeadObject({bucket_, key, "", ""});
  if (!head.ok()) return head.error();
  std::vector<std::byte> out(head->size);
  s3::GetObjectParams p;
  p.bucket = bucket_;
  p.key = key;
  auto r = client_->GetObject(p, out);
  if (!r.ok()) return r.error();
  out.resize(r->bytes);
  return out;
}

std::vector<std::string> ConformanceTest::ListAll(const std::string& prefix) {
  std::vector<std::string> keys;
  s3::ListObjectsV2Params p;
  p.bucket = bucket_;
  p.prefix = prefix;
  for (int page = 0; page < 1000; ++page) {
    auto r = client_->ListObjectsV2(p);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    if (!r.ok()) break;
    for (const auto& o : r->objects) keys.push_back(o.key);
    if (!r->is_truncated) break;
    p.continuation_token = r->next_continuation_token;
  }
  return keys;
}

std::vector<std::byte> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xff);
  return out;
}

std::string QuotedMd5(const std::vector<std::byte>& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_md5(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out + "\"";
}

}  // namespace bucketfs::conformance

namespace bucketfs::conformance {
INSTANTIATE_TEST_SUITE_P(Backends, ConformanceTest, ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& param_info) {
                           return param_info.param.kind;
                         });
}  // namespace bucketfs::conformance
