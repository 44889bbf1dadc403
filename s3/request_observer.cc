#include "s3/request_observer.h"

namespace bucketfs::s3 {

std::string_view S3OpName(S3Op op) {
  switch (op) {
    case S3Op::kOther:
      return "OTHER";
    case S3Op::kGet:
      return "GET";
    case S3Op::kHead:
      return "HEAD";
    case S3Op::kPut:
      return "PUT";
    case S3Op::kList:
      return "LIST";
    case S3Op::kDelete:
      return "DELETE";
    case S3Op::kDeleteMulti:
      return "DELETE_MULTI";
    case S3Op::kCopy:
      return "COPY";
    case S3Op::kCreateMultipart:
      return "CREATE_MULTIPART";
    case S3Op::kUploadPart:
      return "UPLOAD_PART";
    case S3Op::kUploadPartCopy:
      return "UPLOAD_PART_COPY";
    case S3Op::kCompleteMultipart:
      return "COMPLETE_MULTIPART";
    case S3Op::kAbortMultipart:
      return "ABORT_MULTIPART";
    case S3Op::kListMultipart:
      return "LIST_MULTIPART";
    case S3Op::kListBuckets:
      return "LIST_BUCKETS";
    case S3Op::kCreateBucket:
      return "CREATE_BUCKET";
  }
  return "OTHER";
}

}  // namespace bucketfs::s3
