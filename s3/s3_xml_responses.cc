#include "s3/s3_xml_responses.h"

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "s3/s3_executor.h"
#include "s3/xml_util.h"

namespace bucketfs::s3 {
namespace {

constexpr const char* kS3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// Parses `body` and returns its root, checked to be `root_name`. An <Error>
// root becomes the S3 error it describes (S3 answers some operations with
// HTTP 200 and an error document).
Result<pugi::xml_node> OpenRoot(pugi::xml_document& doc, std::string_view body,
                                std::string_view root_name, std::string_view operation) {
  Status st = xml::ParseXmlDocument(body, operation, doc);
  if (!st.ok()) return st.error();
  pugi::xml_node root = doc.document_element();
  if (xml::LocalName(root.name()) == "Error" && root_name != "Error") {
    Error e = ErrorFromErrorDocument(xml::GetTextOr(root, "Code"), xml::GetTextOr(root, "Message"),
                                     xml::GetTextOr(root, "RequestId"), 200);
    e.message = std::string(operation) + " answered HTTP 200 with an error: " + e.message;
    return e;
  }
  return xml::RootElement(doc, root_name, operation);
}

bool IsUrlEncoded(pugi::xml_node root) { return xml::GetTextOr(root, "EncodingType") == "url"; }

// Decodes `text` when the listing is URL-encoded.
Result<std::string> MaybeDecode(std::string text, bool encoded, std::string_view operation) {
  if (!encoded) return text;
  return UrlDecode(text, operation);
}

void AppendTextChild(pugi::xml_node parent, const char* name, std::string_view text) {
  parent.append_child(name).append_child(pugi::node_pcdata).set_value(text.data(), text.size());
}

}  // namespace

Error ErrorFromErrorDocument(std::string_view code, std::string_view message,
                             std::string_view request_id, int http_status) {
  // A 2xx status says nothing about the failure: classify as a server error.
  const int status_for_errno = (http_status >= 200 && http_status < 300) ? 500 : http_status;
  Error e = MakeError(ErrnoForS3Code(code, status_for_errno),
                      code.empty() ? std::string("UnknownError") : std::string(code),
                      message.empty() ? std::string("(no message)") : std::string(message));
  e.http_status = http_status;
  e.request_id = std::string(request_id);
  e.retryable = code == "InternalError" || code == "SlowDown" || code == "ServiceUnavailable" ||
                code == "RequestTimeout";
  return e;
}

Result<std::string> UrlDecode(std::string_view text, std::string_view operation) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      const bool complete = i + 2 < text.size();
      const int hi = complete ? base::HexDigitValue(text[i + 1]) : -1;
      const int lo = complete ? base::HexDigitValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return xml::MalformedResponse(operation, "invalid %-escape in URL-encoded value");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

Result<ListObjectsV2Result> ParseListObjectsV2(std::string_view body) {
  constexpr std::string_view kOp = "ListObjectsV2";
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, "ListBucketResult", kOp);
  if (!root) return root.error();
  const bool encoded = IsUrlEncoded(*root);
  ListObjectsV2Result out;
  Status failure;
  xml::ForEachChild(*root, "Contents", [&](pugi::xml_node c) {
    if (!failure.ok()) return;
    ObjectInfo info;
    auto key = xml::GetRequiredText(c, "Key", kOp);
    auto size = xml::GetUint64(c, "Size", kOp);
    auto modified = xml::GetTimestamp(c, "LastModified", kOp, Timestamp{});
    if (!key || !size || !modified) {
      failure = !key ? key.error() : !size ? size.error() : modified.error();
      return;
    }
    auto decoded = MaybeDecode(std::move(*key), encoded, kOp);
    if (!decoded) {
      failure = decoded.error();
      return;
    }
    info.key = std::move(*decoded);
    info.size = *size;
    info.last_modified = *modified;
    info.etag = xml::GetTextOr(c, "ETag");
    info.storage_class = xml::GetTextOr(c, "StorageClass");
    out.objects.push_back(std::move(info));
  });
  xml::ForEachChild(*root, "CommonPrefixes", [&](pugi::xml_node c) {
    if (!failure.ok()) return;
    // One <Prefix> per <CommonPrefixes> in S3; accept several, as some stores group them.
    xml::ForEachChild(c, "Prefix", [&](pugi::xml_node p) {
      if (!failure.ok()) return;
      auto decoded = MaybeDecode(xml::NodeText(p), encoded, kOp);
      if (!decoded) {
        failure = decoded.error();
        return;
      }
      out.common_prefixes.push_back(std::move(*decoded));
    });
  });
  if (!failure.ok()) return failure.error();
  auto truncated = xml::GetBool(*root, "IsTruncated", kOp, false);
  if (!truncated) return truncated.error();
  out.is_truncated = *truncated;
  out.next_continuation_token = xml::GetTextOr(*root, "NextContinuationToken");
  if (out.is_truncated && out.next_continuation_token.empty()) {
    // Paging on would restart from the beginning forever.
    return xml::MalformedResponse(kOp, "IsTruncated is true but NextContinuationToken is missing");
  }
  return out;
}

Result<ListBucketsResult> ParseListBuckets(std::string_view body) {
  constexpr std::string_view kOp = "ListBuckets";
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, "ListAllMyBucketsResult", kOp);
  if (!root) return root.error();
  ListBucketsResult out;
  Status failure;
  xml::ForEachChild(xml::Child(*root, "Buckets"), "Bucket", [&](pugi::xml_node b) {
    if (!failure.ok()) return;
    auto name = xml::GetRequiredText(b, "Name", kOp);
    auto created = xml::GetTimestamp(b, "CreationDate", kOp, Timestamp{});
    if (!name || !created) {
      failure = !name ? name.error() : created.error();
      return;
    }
    out.buckets.push_back(BucketInfo{std::move(*name), *created});
  });
  if (!failure.ok()) return failure.error();
  return out;
}

Result<ListMultipartUploadsResult> ParseListMultipartUploads(std::string_view body) {
  constexpr std::string_view kOp = "ListMultipartUploads";
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, "ListMultipartUploadsResult", kOp);
  if (!root) return root.error();
  const bool encoded = IsUrlEncoded(*root);
  ListMultipartUploadsResult out;
  Status failure;
  xml::ForEachChild(*root, "Upload", [&](pugi::xml_node u) {
    if (!failure.ok()) return;
    auto key = xml::GetRequiredText(u, "Key", kOp);
    auto id = xml::GetRequiredText(u, "UploadId", kOp);
    auto initiated = xml::GetTimestamp(u, "Initiated", kOp, Timestamp{});
    if (!key || !id || !initiated) {
      failure = !key ? key.error() : !id ? id.error() : initiated.error();
      return;
    }
    auto decoded = MaybeDecode(std::move(*key), encoded, kOp);
    if (!decoded) {
      failure = decoded.error();
      return;
    }
    out.uploads.push_back(MultipartUploadInfo{std::move(*decoded), std::move(*id), *initiated});
  });
  if (!failure.ok()) return failure.error();
  auto truncated = xml::GetBool(*root, "IsTruncated", kOp, false);
  if (!truncated) return truncated.error();
  out.is_truncated = *truncated;
  auto next_key = MaybeDecode(xml::GetTextOr(*root, "NextKeyMarker"), encoded, kOp);
  if (!next_key) return next_key.error();
  out.next_key_marker = std::move(*next_key);
  out.next_upload_id_marker = xml::GetTextOr(*root, "NextUploadIdMarker");
  return out;
}

Result<CreateMultipartUploadResult> ParseInitiateMultipartUpload(std::string_view body) {
  constexpr std::string_view kOp = "CreateMultipartUpload";
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, "InitiateMultipartUploadResult", kOp);
  if (!root) return root.error();
  auto id = xml::GetRequiredText(*root, "UploadId", kOp);
  if (!id) return id.error();
  if (id->empty()) return xml::MalformedResponse(kOp, "empty <UploadId>");
  return CreateMultipartUploadResult{std::move(*id)};
}

Result<CompleteMultipartUploadResult> ParseCompleteMultipartUpload(std::string_view body) {
  constexpr std::string_view kOp = "CompleteMultipartUpload";
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, "CompleteMultipartUploadResult", kOp);
  if (!root) return root.error();
  return CompleteMultipartUploadResult{xml::GetTextOr(*root, "ETag")};
}

Result<DeleteObjectsResult> ParseDeleteResult(std::string_view body,
                                              const std::vector<std::string>& requested,
                                              bool quiet) {
  constexpr std::string_view kOp = "DeleteObjects";
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, "DeleteResult", kOp);
  if (!root) return root.error();
  DeleteObjectsResult out;
  xml::ForEachChild(*root, "Deleted",
                    [&](pugi::xml_node d) { out.deleted.push_back(xml::GetTextOr(d, "Key")); });
  xml::ForEachChild(*root, "Error", [&](pugi::xml_node e) {
    Error err =
        ErrorFromErrorDocument(xml::GetTextOr(e, "Code"), xml::GetTextOr(e, "Message"), "", 0);
    out.failed.emplace_back(xml::GetTextOr(e, "Key"), std::move(err));
  });
  if (quiet) {
    std::set<std::string_view> failed;
    for (const auto& f : out.failed) failed.insert(f.first);
    std::set<std::string_view> listed(out.deleted.begin(), out.deleted.end());
    // Appended after the loop: growing out.deleted would move the strings
    // that `listed` points into.
    std::vector<std::string> implied;
    for (const auto& k : requested) {
      if (!failed.count(k) && !listed.count(k)) implied.push_back(k);
    }
    out.deleted.insert(out.deleted.end(), implied.begin(), implied.end());
  }
  return out;
}

namespace {
Result<CopyObjectResult> ParseCopyResult(std::string_view body, std::string_view root_name,
                                         std::string_view operation) {
  pugi::xml_document doc;
  auto root = OpenRoot(doc, body, root_name, operation);
  if (!root) return root.error();
  auto modified = xml::GetTimestamp(*root, "LastModified", operation, Timestamp{});
  if (!modified) return modified.error();
  return CopyObjectResult{xml::GetTextOr(*root, "ETag"), *modified,
                          xml::GetTextOr(*root, "ChecksumCRC32C")};
}
}  // namespace

Result<CopyObjectResult> ParseCopyObjectResult(std::string_view body) {
  return ParseCopyResult(body, "CopyObjectResult", "CopyObject");
}

Result<CopyObjectResult> ParseCopyPartResult(std::string_view body) {
  return ParseCopyResult(body, "CopyPartResult", "UploadPartCopy");
}

std::string BuildCompleteMultipartUploadXml(const std::vector<CompletedPart>& parts) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CompleteMultipartUpload");
  root.append_attribute("xmlns").set_value(kS3Namespace);
  for (const auto& p : parts) {
    pugi::xml_node part = root.append_child("Part");
    AppendTextChild(part, "PartNumber", std::to_string(p.part_number));
    AppendTextChild(part, "ETag", p.etag);
    if (!p.checksum_crc32c.empty()) AppendTextChild(part, "ChecksumCRC32C", p.checksum_crc32c);
  }
  return xml::Serialize(doc);
}

std::string BuildDeleteObjectsXml(const std::vector<std::string>& keys, bool quiet) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("Delete");
  root.append_attribute("xmlns").set_value(kS3Namespace);
  AppendTextChild(root, "Quiet", quiet ? "true" : "false");
  for (const auto& k : keys) AppendTextChild(root.append_child("Object"), "Key", k);
  return xml::Serialize(doc);
}

std::string BuildCreateBucketXml(std::string_view region) {
  if (region.empty() || region == "us-east-1") return "";
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CreateBucketConfiguration");
  root.append_attribute("xmlns").set_value(kS3Namespace);
  AppendTextChild(root, "LocationConstraint", region);
  return xml::Serialize(doc);
}

}  // namespace bucketfs::s3
