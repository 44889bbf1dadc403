// MakeS3Client: the composition of the real client from one ClientConfig:
// Endpoint, credentials chain, libcurl transport, S3Executor and the typed
// S3ObjectClient, owned together by a small wrapper.
//
// Teardown order matters: the attempts waiting for a pacer slot end first
// (they would otherwise start on a destroyed transport). Destroying the
// transport completes every request still pending with "Shutdown", and
// those completions run through the executor and the callers' callbacks. So
// the transport goes next, while the executor and client it calls back
// into are still alive.
#include <memory>
#include <utility>

#include "s3/curl_transport.h"
#include "s3/object_client.h"
#include "s3/object_client_impl.h"
#include "s3/request_observer.h"
#include "s3/s3_executor.h"

namespace bucketfs::s3 {
namespace {

class OwningS3Client final : public ObjectClient {
 public:
  OwningS3Client(std::unique_ptr<HttpTransport> transport, const Endpoint& endpoint,
                 std::shared_ptr<CredentialsProvider> credentials, const ClientConfig& config,
                 std::shared_ptr<RequestObserver> observer)
      : observer_(std::move(observer)),
        executor_(std::make_unique<S3Executor>(*transport, endpoint, std::move(credentials), config,
                                               observer_.get())),
        client_(std::make_unique<S3ObjectClient>(*executor_)),
        transport_(std::move(transport)) {}

  ~OwningS3Client() override {
    executor_->Shutdown();  // attempts waiting for a pacer slot end; later ones go to the transport
    transport_.reset();     // completes in-flight requests while executor_ lives
    client_.reset();
    executor_.reset();
  }

  Result<HeadObjectResult> HeadObject(const HeadObjectParams& p) override {
    return client_->HeadObject(p);
  }
  Result<GetObjectResult> GetObject(const GetObjectParams& p, std::span<std::byte> dest) override {
    return client_->GetObject(p, dest);
  }
  void GetObjectAsync(const GetObjectParams& p, std::span<std::byte> dest,
                      std::function<void(Result<GetObjectResult>)> done) override {
    client_->GetObjectAsync(p, dest, std::move(done));
  }
  Result<PutObjectResult> PutObject(const PutObjectParams& p,
                                    std::span<const std::byte> body) override {
    return client_->PutObject(p, body);
  }
  Result<CreateMultipartUploadResult> CreateMultipartUpload(
      const CreateMultipartUploadParams& p) override {
    return client_->CreateMultipartUpload(p);
  }
  Result<UploadPartResult> UploadPart(const UploadPartParams& p,
                                      std::span<const std::byte> body) override {
    return client_->UploadPart(p, body);
  }
  void UploadPartAsync(const UploadPartParams& p, std::span<const std::byte> body,
                       std::function<void(Result<UploadPartResult>)> done) override {
    client_->UploadPartAsync(p, body, std::move(done));
  }
  Result<UploadPartResult> UploadPartCopy(const UploadPartCopyParams& p) override {
    return client_->UploadPartCopy(p);
  }
  Result<CompleteMultipartUploadResult> CompleteMultipartUpload(
      const CompleteMultipartUploadParams& p) override {
    return client_->CompleteMultipartUpload(p);
  }
  Status AbortMultipartUpload(const AbortMultipartUploadParams& p) override {
    return client_->AbortMultipartUpload(p);
  }
  Result<ListMultipartUploadsResult> ListMultipartUploads(
      const ListMultipartUploadsParams& p) override {
    return client_->ListMultipartUploads(p);
  }
  Result<ListObjectsV2Result> ListObjectsV2(const ListObjectsV2Params& p) override {
    return client_->ListObjectsV2(p);
  }
  Result<ListBucketsResult> ListBuckets() override { return client_->ListBuckets(); }
  Status DeleteObject(const DeleteObjectParams& p) override { return client_->DeleteObject(p); }
  Result<DeleteObjectsResult> DeleteObjects(const DeleteObjectsParams& p) override {
    return client_->DeleteObjects(p);
  }
  Result<CopyObjectResult> CopyObject(const CopyObjectParams& p) override {
    return client_->CopyObject(p);
  }
  Status CreateBucket(const CreateBucketParams& p) override { return client_->CreateBucket(p); }

 private:
  // Built in this order; torn down in the reverse of the destructor's resets.
  std::shared_ptr<RequestObserver> observer_;  // outlives the executor that calls it
  std::unique_ptr<S3Executor> executor_;
  std::unique_ptr<S3ObjectClient> client_;
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace

Result<std::unique_ptr<ObjectClient>> MakeS3Client(const ClientConfig& config, const EnvMap& env,
                                                   std::shared_ptr<RequestObserver> observer) {
  auto endpoint = Endpoint::FromConfig(config);
  if (!endpoint.ok()) return endpoint.error();
  std::shared_ptr<CredentialsProvider> credentials =
      MakeDefaultCredentialsChain(config.credentials, env);
  CurlTransportOptions options;
  options.threads = config.transport_threads;
  options.max_connections = config.max_connections;
  options.ca_bundle = config.ca_bundle;
  options.verify_tls = config.verify_tls;
  auto transport = MakeCurlTransport(options);
  if (!transport.ok()) return transport.error();
  std::unique_ptr<ObjectClient> client = std::make_unique<OwningS3Client>(
      std::move(*transport), *endpoint, std::move(credentials), config, std::move(observer));
  return client;
}

}  // namespace bucketfs::s3
