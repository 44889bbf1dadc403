// CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload,
// AbortMultipartUpload, ListMultipartUploads, ListParts.
#include <pugixml.hpp>

#include "tests/s3sim/body_pool.h"
#include "tests/s3sim/crc32c.h"
#include "tests/s3sim/handlers.h"
#include "tests/s3sim/range.h"
#include "tests/s3sim/util.h"
#include "tests/s3sim/xml_writer.h"

namespace s3sim {
namespace {

Expected<int> PartNumber(const S3Request& r) {
  auto n = ParseU64(r.Q("partNumber"));
  if (!n || *n < 1 || *n > 10000) {
    return S3Error{400, "InvalidArgument",
                   "Part number must be an integer between 1 and 10000, inclusive"};
  }
  return static_cast<int>(*n);
}

HttpResponse StorePart(Store& store, const S3Request& r, int number, std::string data, bool copy,
                       std::string crc32c = "") {
  Part part;
  part.crc32c = std::move(crc32c);
  part.md5 = Md5(data);
  part.etag = Hex(part.md5);
  part.etag.insert(0, 1, '"').push_back('"');
  part.mtime = std::time(nullptr);
  part.data = BodyPool::Default().Share(std::move(data));
  std::string etag = part.etag;
  std::string sum = part.crc32c;
  if (auto err = store.PutPart(r.bucket, r.key, r.Q("uploadId"), number, std::move(part))) {
    return ErrorResponse(*err, r);
  }
  if (copy) {
    XmlWriter xml("CopyPartResult");
    xml.Elem("LastModified", IsoDate(std::time(nullptr))).Elem("ETag", etag);
    if (!sum.empty()) xml.Elem("ChecksumCRC32C", sum);
    return XmlResponse(200, xml.Finish());
  }
  HttpResponse resp;
  resp.AddHeader("ETag", etag);
  return resp;
}

}  // namespace

HttpResponse HandleCreateMultipartUpload(Store& store, const S3Request& r) {
  const std::string* ct = r.Header("content-type");
  const std::string* algorithm = r.Header("x-amz-checksum-algorithm");
  auto id = store.CreateUpload(r.bucket, r.key, ct ? *ct : "", StoredHeaders(*r.http),
                               algorithm ? *algorithm : "");
  if (!id.ok()) return ErrorResponse(id.error(), r);
  XmlWriter xml("InitiateMultipartUploadResult");
  xml.Elem("Bucket", r.bucket).Elem("Key", r.key).Elem("UploadId", *id);
  return XmlResponse(200, xml.Finish());
}

HttpResponse HandleUploadPart(Store& store, S3Request& r) {
  auto number = PartNumber(r);
  if (!number.ok()) return ErrorResponse(number.error(), r);
  if (auto err = CheckContentMd5(r, r.http->body)) return ErrorResponse(*err, r);
  if (auto err = CheckChecksumCrc32c(r, r.http->body)) return ErrorResponse(*err, r);
  const std::string* sum = r.Header("x-amz-checksum-crc32c");
  // Kept in the canonical spelling (verified above) for Complete and ListParts.
  std::string crc32c = sum ? Base64(*Unbase64(*sum)) : std::string();
  HttpResponse resp =
      StorePart(store, r, *number, std::move(r.http->body), false, std::move(crc32c));
  EchoChecksum(r, resp);
  return resp;
}

HttpResponse HandleUploadPartCopy(Store& store, const S3Request& r) {
  auto number = PartNumber(r);
  if (!number.ok()) return ErrorResponse(number.error(), r);
  auto upload = store.GetUpload(r.bucket, r.key, r.Q("uploadId"));
  if (!upload.ok()) return ErrorResponse(upload.error(), r);
  auto src = ParseCopySource(*r.Header("x-amz-copy-source"));
  if (!src.ok()) return ErrorResponse(src.error(), r);
  auto found = store.Get(src->first, src->second);
  if (!found.ok()) return ErrorResponse(found.error(), r);
  const Body& data = *(*found)->data;
  uint64_t first = 0, length = data.size();
  if (const std::string* range = r.Header("x-amz-copy-source-range")) {
    RangeResult rr = ParseRange(*range, data.size());
    // Only the explicit "bytes=a-b" form, fully inside the object, is valid here.
    size_t dash = range->find('-');
    bool explicit_form = range->rfind("bytes=", 0) == 0 && dash != std::string::npos && dash > 6 &&
                         dash + 1 < range->size();
    if (rr.kind != RangeResult::Kind::kPartial || !explicit_form) {
      return ErrorResponse({400, "InvalidArgument",
                            "The x-amz-copy-source-range value must be of the form "
                            "bytes=first-last where first and last are the zero-based offsets "
                            "of the first and last bytes to copy"},
                           r);
    }
    auto last = ParseU64(std::string_view(*range).substr(dash + 1));
    if (!last || *last >= data.size()) {
      return ErrorResponse({416, "InvalidRange", "The requested range is not satisfiable"}, r);
    }
    first = rr.first;
    length = rr.last - rr.first + 1;
  }
  std::string part = data.Substr(first, length);
  // Like S3: a copy into an upload created with CRC32C reports the part's
  // sum in CopyPartResult, for CompleteMultipartUpload to repeat.
  std::string crc32c = ToLower(upload->checksum_algorithm) == "crc32c" ? Crc32cBase64(part) : "";
  return StorePart(store, r, *number, std::move(part), true, std::move(crc32c));
}

HttpResponse HandleCompleteMultipartUpload(Store& store, const S3Request& r) {
  const std::string& body = r.http->body;
  S3Error malformed{400, "MalformedXML",
                    "The XML you provided was not well-formed or did not validate against our "
                    "published schema"};
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return ErrorResponse(malformed, r);
  pugi::xml_node root = doc.child("CompleteMultipartUpload");
  if (!root) return ErrorResponse(malformed, r);
  std::vector<CompletedPart> parts;
  for (pugi::xml_node p : root.children("Part")) {
    auto n = ParseU64(Trim(p.child_value("PartNumber"), kSpaceOrTab));
    if (!n || !p.child("ETag") || *n < 1 || *n > 10000) return ErrorResponse(malformed, r);
    CompletedPart part{
        static_cast<int>(*n), std::string(Trim(p.child_value("ETag"), kSpaceOrTab)), {}};
    if (pugi::xml_node sum = p.child("ChecksumCRC32C"))
      part.crc32c = Trim(sum.child_value(), kSpaceOrTab);
    parts.push_back(std::move(part));
  }
  auto obj = store.Complete(r.bucket, r.key, r.Q("uploadId"), parts);
  if (!obj.ok()) return ErrorResponse(obj.error(), r);
  XmlWriter xml("CompleteMultipartUploadResult");
  const std::string* host = r.Header("host");
  std::string location = "http://";
  location.append(host ? *host : std::string("localhost")).append("/").append(r.bucket);
  location.append("/").append(UriEncode(r.key, false));
  xml.Elem("Location", location);
  xml.Elem("Bucket", r.bucket).Elem("Key", r.key).Elem("ETag", (*obj)->etag);
  return XmlResponse(200, xml.Finish());
}

HttpResponse HandleAbortMultipartUpload(Store& store, const S3Request& r) {
  if (auto err = store.Abort(r.bucket, r.key, r.Q("uploadId"))) return ErrorResponse(*err, r);
  HttpResponse resp;
  resp.status = 204;
  return resp;
}

HttpResponse HandleListMultipartUploads(Store& store, const S3Request& r) {
  auto uploads = store.ListUploads(r.bucket, r.Q("prefix"));
  if (!uploads.ok()) return ErrorResponse(uploads.error(), r);
  XmlWriter xml("ListMultipartUploadsResult");
  xml.Elem("Bucket", r.bucket).Elem("KeyMarker", "").Elem("UploadIdMarker", "");
  xml.Elem("NextKeyMarker", "").Elem("NextUploadIdMarker", "").Elem("Prefix", r.Q("prefix"));
  xml.Elem("MaxUploads", 1000LL).Elem("IsTruncated", false);
  for (const Upload& u : *uploads) {
    xml.Open("Upload").Elem("Key", u.key).Elem("UploadId", u.id);
    xml.Open("Initiator").Elem("ID", "s3sim").Elem("DisplayName", "s3sim").Close("Initiator");
    xml.Open("Owner").Elem("ID", "s3sim").Elem("DisplayName", "s3sim").Close("Owner");
    xml.Elem("StorageClass", "STANDARD").Elem("Initiated", IsoDate(u.initiated)).Close("Upload");
  }
  return XmlResponse(200, xml.Finish());
}

HttpResponse HandleListParts(Store& store, const S3Request& r) {
  auto upload = store.GetUpload(r.bucket, r.key, r.Q("uploadId"));
  if (!upload.ok()) return ErrorResponse(upload.error(), r);
  XmlWriter xml("ListPartsResult");
  xml.Elem("Bucket", r.bucket).Elem("Key", r.key).Elem("UploadId", upload->id);
  xml.Elem("PartNumberMarker", 0LL).Elem("MaxParts", 1000LL).Elem("IsTruncated", false);
  xml.Elem("StorageClass", "STANDARD");
  if (!upload->checksum_algorithm.empty())
    xml.Elem("ChecksumAlgorithm", upload->checksum_algorithm);
  for (const auto& [n, p] : upload->parts) {
    xml.Open("Part").Elem("PartNumber", static_cast<long long>(n));
    xml.Elem("LastModified", IsoDate(p.mtime)).Elem("ETag", p.etag);
    if (!p.crc32c.empty()) xml.Elem("ChecksumCRC32C", p.crc32c);
    xml.Elem("Size", static_cast<long long>(p.data->size())).Close("Part");
  }
  return XmlResponse(200, xml.Finish());
}

}  // namespace s3sim
