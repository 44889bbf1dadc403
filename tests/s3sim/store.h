// The in-memory bucket/object/multipart-upload store behind the handlers.
//
// Locking: mu_ (shared_mutex) guards buckets_ and every bucket's object map;
// operations hold it only to look up or swap pointers, never while copying or
// hashing data. uploads_mu_ guards uploads_. Lock order: uploads_mu_ before
// mu_ (Complete takes both).
#ifndef TESTS_S3SIM_STORE_H_
#define TESTS_S3SIM_STORE_H_

#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "tests/s3sim/listing.h"
#include "tests/s3sim/object.h"
#include "tests/s3sim/s3_error.h"

namespace s3sim {

struct Part {
  BufferPtr data;
  std::string md5;   // raw 16 bytes
  std::string etag;  // quoted
  std::time_t mtime = 0;
  std::string crc32c;  // base64 x-amz-checksum-crc32c the part was sent (and verified) with
};

struct Upload {
  std::string bucket, key, id;
  std::time_t initiated = 0;
  std::string content_type;
  HeaderList metadata;
  std::string checksum_algorithm;  // x-amz-checksum-algorithm at creation (CRC32C), or empty
  std::map<int, Part> parts;
};

struct BucketInfo {
  std::string name;
  std::time_t created = 0;
};

struct CompletedPart {
  int number = 0;
  std::string etag;
  std::optional<std::string> crc32c;  // <ChecksumCRC32C>, when the request has one
};

class Store {
 public:
  explicit Store(uint64_t min_part_size) : min_part_size_(min_part_size) {}

  // Returns false when the bucket already exists.
  bool CreateBucket(const std::string& name);
  std::optional<S3Error> DeleteBucket(const std::string& name);
  bool BucketExists(const std::string& name) const;
  std::vector<BucketInfo> ListBuckets() const;

  Expected<ObjectPtr> Get(const std::string& bucket, const std::string& key) const;
  std::optional<S3Error> Put(const std::string& bucket, const std::string& key, ObjectPtr obj);
  // Deleting a missing key succeeds, as in S3.
  std::optional<S3Error> Delete(const std::string& bucket, const std::string& key);
  Expected<ListPage> List(const std::string& bucket, const ListParams& params) const;

  Expected<std::string> CreateUpload(const std::string& bucket, const std::string& key,
                                     std::string content_type, HeaderList metadata,
                                     std::string checksum_algorithm = "");
  std::optional<S3Error> PutPart(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id, int number, Part part);
  // Each part must match by ETag and, when given (always, for an upload
  // created with CRC32C), by its CRC32C, as S3 checks them.
  Expected<ObjectPtr> Complete(const std::string& bucket, const std::string& key,
                               const std::string& upload_id,
                               const std::vector<CompletedPart>& parts);
  std::optional<S3Error> Abort(const std::string& bucket, const std::string& key,
                               const std::string& upload_id);
  Expected<std::vector<Upload>> ListUploads(const std::string& bucket,
                                            const std::string& prefix) const;
  Expected<Upload> GetUpload(const std::string& bucket, const std::string& key,
                             const std::string& upload_id) const;

 private:
  struct Bucket {
    std::time_t created = 0;
    std::map<std::string, ObjectPtr> objects;
  };

  const uint64_t min_part_size_;
  mutable bucketfs::SharedMutex mu_;
  std::map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
  mutable bucketfs::Mutex uploads_mu_ ACQUIRED_BEFORE(mu_);
  std::map<std::string, Upload> uploads_ GUARDED_BY(uploads_mu_);  // by upload id
  uint64_t next_upload_ GUARDED_BY(uploads_mu_) = 1;
};

}  // namespace s3sim

#endif  // TESTS_S3SIM_STORE_H_
