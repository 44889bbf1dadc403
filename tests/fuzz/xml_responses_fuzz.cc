// Fuzz target: S3's XML answer parsers (s3/s3_xml_responses.h). The first
// byte picks the parser, the rest is the body. Any body must give a result
// or an error, never a crash, and what a parser accepts must keep its
// documented promises (a truncated listing always has a token to go on).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "s3/s3_xml_responses.h"

using namespace bucketfs;      // NOLINT(google-build-using-namespace)
using namespace bucketfs::s3;  // NOLINT(google-build-using-namespace)

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

template <typename T>
void MustFailAsMalformedOrS3(const Result<T>& r) {
  // Errors carry an errno and a code: the FUSE edge turns them into errno.
  if (!r.ok()) Check(r.error().errno_value > 0 && !r.error().code.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (which % 10) {
    case 0: {
      auto r = ParseListObjectsV2(body);
      MustFailAsMalformedOrS3(r);
      if (r.ok() && r->is_truncated) Check(!r->next_continuation_token.empty());
      break;
    }
    case 1:
      MustFailAsMalformedOrS3(ParseListBuckets(body));
      break;
    case 2:
      MustFailAsMalformedOrS3(ParseListMultipartUploads(body));
      break;
    case 3:
      MustFailAsMalformedOrS3(ParseInitiateMultipartUpload(body));
      break;
    case 4:
      MustFailAsMalformedOrS3(ParseCompleteMultipartUpload(body));
      break;
    case 5: {
      const std::vector<std::string> requested = {"a", "b/c", "d e"};
      const bool quiet = (which & 0x80) != 0;
      auto r = ParseDeleteResult(body, requested, quiet);
      MustFailAsMalformedOrS3(r);
      break;
    }
    case 6:
      MustFailAsMalformedOrS3(ParseCopyObjectResult(body));
      break;
    case 7:
      MustFailAsMalformedOrS3(ParseCopyPartResult(body));
      break;
    case 8: {
      auto r = UrlDecode(body, "fuzz");
      MustFailAsMalformedOrS3(r);
      if (r.ok()) Check(r->size() <= body.size());
      break;
    }
    default: {
      const Error e = ErrorFromErrorDocument(body, body, body, 200 + which);
      Check(e.errno_value > 0);
      break;
    }
  }
  return 0;
}
