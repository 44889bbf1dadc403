// Conformance: a part or object whose bytes change between the client's
// x-amz-checksum-crc32c and the wire is refused by the server (400
// BadDigest) and not stored. The corruption is made by a transport seam under
// the real client: CorruptingTransport flips one byte of every body that
// carries the header after the client summed it, as a bad NIC or memory would.
#include <atomic>
#include <deque>
#include <mutex>

#include "s3/crc32c.h"
#include "s3/credentials.h"
#include "s3/curl_transport.h"
#include "s3/http_transport.h"
#include "s3/s3_executor.h"
#include "tests/conformance/conformance_test.h"

namespace bucketfs::conformance {
namespace {

class CorruptingTransport final : public s3::HttpTransport {
 public:
  explicit CorruptingTransport(std::unique_ptr<s3::HttpTransport> inner)
      : inner_(std::move(inner)) {}
  ~CorruptingTransport() override { inner_.reset(); }  // completes pending requests first

  std::atomic<bool> corrupt{true};
  std::atomic<int> corrupted{0};

  void Submit(s3::HttpRequest request, std::shared_ptr<s3::HttpResponseHandler> handler,
              std::chrono::milliseconds delay) override {
    if (corrupt && !request.body.empty() &&
        s3::FindHeader(request.headers, "x-amz-checksum-crc32c") != nullptr) {
      std::span<const std::byte> copy;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto& bytes = copies_.emplace_back(request.body.begin(), request.body.end());
        bytes[bytes.size() / 2] ^= std::byte{0x01};
        copy = bytes;
      }
      request.body = copy;
      ++corrupted;
    }
    inner_->Submit(std::move(request), std::move(handler), delay);
  }

 private:
  std::unique_ptr<s3::HttpTransport> inner_;
  std::mutex mu_;
  std::deque<std::vector<std::byte>> copies_;  // kept until the transport goes
};

// The real client (executor + ObjectClient) over a CorruptingTransport.
struct CorruptingClient {
  explicit CorruptingClient(const testing::S3TestServer& server) {
    s3::ClientConfig config = server.MakeConfig();
    // Unsigned payloads: a signed body hash would catch the flip first
    // (XAmzContentSHA256Mismatch) and the checksum would go untested.
    config.sign_payload_max_bytes = 0;
    config.max_attempts = 2;
    s3::CurlTransportOptions options;
    options.threads = 2;
    auto curl = s3::MakeCurlTransport(options);
    EXPECT_TRUE(curl.ok()) << curl.error().ToString();
    if (!curl.ok()) return;
    auto endpoint = s3::Endpoint::FromConfig(config);
    EXPECT_TRUE(endpoint.ok());
    if (!endpoint.ok()) return;
    transport = std::make_unique<CorruptingTransport>(std::move(*curl));
    executor = std::make_unique<s3::S3Executor>(
        *transport, *endpoint,
        s3::MakeDefaultCredentialsChain(config.credentials, server.MakeEnv()), config);
    client = s3::MakeObjectClient(*executor);
  }
  ~CorruptingClient() {
    transport.reset();  // completes in-flight requests while the executor lives
    client.reset();
    executor.reset();
  }

  std::unique_ptr<CorruptingTransport> transport;
  std::unique_ptr<s3::S3Executor> executor;
  std::unique_ptr<s3::ObjectClient> client;
};

TEST_P(ConformanceTest, CorruptedCrc32cBodiesAreRejected) {
  if (!backend().verifies_crc32c) GTEST_SKIP() << backend().kind << " ignores x-amz-checksum-*";
  CorruptingClient bad(server());
  ASSERT_NE(bad.client, nullptr);
  const auto data = RandomBytes(backend().min_part_size + 100, 21);

  s3::PutObjectParams put{bucket(), "corrupt/single", "", s3::BodyChecksum::kCrc32c, ""};
  auto r = bad.client->PutObject(put, data);
  ASSERT_FALSE(r.ok()) << "a corrupted PutObject body was accepted";
  EXPECT_EQ(r.error().code, "BadDigest") << r.error().ToString();
  EXPECT_EQ(r.error().http_status, 400);
  EXPECT_GE(bad.transport->corrupted.load(), 1);
  auto head = client().HeadObject({bucket(), "corrupt/single", "", ""});
  ASSERT_FALSE(head.ok()) << "the corrupted object was stored";
  EXPECT_EQ(head.error().errno_value, ENOENT) << head.error().ToString();

  s3::CreateMultipartUploadParams cp{bucket(), "corrupt/multi", ""};
  cp.checksum = s3::BodyChecksum::kCrc32c;
  auto created = client().CreateMultipartUpload(cp);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  s3::UploadPartParams up{bucket(), "corrupt/multi", created->upload_id, 1,
                          s3::BodyChecksum::kCrc32c};
  auto part = bad.client->UploadPart(up, data);
  ASSERT_FALSE(part.ok()) << "a corrupted part was accepted";
  EXPECT_EQ(part.error().code, "BadDigest") << part.error().ToString();
  // Nothing stored: completing with the part's would-be ETag finds no part.
  auto done = client().CompleteMultipartUpload(
      {bucket(), "corrupt/multi", created->upload_id, {{1, QuotedMd5(data)}}});
  EXPECT_FALSE(done.ok()) << "a part from a corrupted body was stored";

  // The same seam without the flip: the bytes arrive intact and are accepted,
  // so the refusals above come from the checksum, not from the seam.
  bad.transport->corrupt = false;
  auto good = bad.client->UploadPart(up, data);
  ASSERT_TRUE(good.ok()) << good.error().ToString();
  EXPECT_FALSE(good->checksum_crc32c.empty());
  ASSERT_TRUE(bad.client->PutObject(put, data).ok());
  auto got = Get("corrupt/single");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_TRUE(*got == data);
}

// CompleteMultipartUpload names each part's CRC32C, the sum the client
// computed from the bytes it sent; the server checks it like the ETag.
TEST_P(ConformanceTest, CompleteChecksEachPartsCrc32c) {
  if (!backend().verifies_crc32c) GTEST_SKIP() << backend().kind << " ignores x-amz-checksum-*";
  const auto first = RandomBytes(backend().min_part_size, 31);
  const auto last = RandomBytes(1000, 32);
  s3::CreateMultipartUploadParams cp{bucket(), "complete/crc32c", ""};
  cp.checksum = s3::BodyChecksum::kCrc32c;
  auto created = client().CreateMultipartUpload(cp);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  std::vector<s3::CompletedPart> parts;
  int n = 1;
  for (const auto* body : {&first, &last}) {
    s3::UploadPartParams up{bucket(), "complete/crc32c", created->upload_id, n,
                            s3::BodyChecksum::kCrc32c};
    auto r = client().UploadPart(up, *body);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(r->checksum_crc32c, s3::Crc32cBase64(*body)) << "part " << n;
    parts.push_back({n++, r->etag, r->checksum_crc32c});
  }
  auto complete = [&](std::vector<s3::CompletedPart> with) {
    return client().CompleteMultipartUpload(
        {bucket(), "complete/crc32c", created->upload_id, std::move(with)});
  };

  auto wrong = parts;
  wrong[1].checksum_crc32c = s3::Crc32cBase64(first);
  auto refused = complete(wrong);
  ASSERT_FALSE(refused.ok()) << "a wrong part CRC32C was accepted";
  EXPECT_EQ(refused.error().code, "InvalidPart") << refused.error().ToString();
  EXPECT_EQ(refused.error().http_status, 400);

  auto missing = parts;
  missing[0].checksum_crc32c.clear();
  refused = complete(missing);
  ASSERT_FALSE(refused.ok()) << "a CRC32C upload completed without a part's sum";
  EXPECT_EQ(refused.error().code, "InvalidRequest") << refused.error().ToString();

  auto head = client().HeadObject({bucket(), "complete/crc32c", "", ""});
  ASSERT_FALSE(head.ok()) << "a refused Complete created the object";

  auto done = complete(parts);
  ASSERT_TRUE(done.ok()) << done.error().ToString();
  auto got = Get("complete/crc32c");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  auto whole = first;
  whole.insert(whole.end(), last.begin(), last.end());
  EXPECT_TRUE(*got == whole);
}

}  // namespace
}  // namespace bucketfs::conformance
