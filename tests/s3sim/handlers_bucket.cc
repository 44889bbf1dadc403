// ListBuckets, CreateBucket, DeleteBucket, HeadBucket, GetBucketLocation,
// ListObjects (v1 and v2), DeleteObjects.
#include <pugixml.hpp>

#include "tests/s3sim/handlers.h"
#include "tests/s3sim/util.h"
#include "tests/s3sim/xml_writer.h"

namespace s3sim {
namespace {

constexpr char kTokenTag[] = "s3sim1:";

bool ValidBucketName(const std::string& name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  }
  return name.front() != '-' && name.front() != '.' && name.back() != '-' && name.back() != '.';
}

void AddOwner(XmlWriter& xml) {
  xml.Open("Owner").Elem("ID", "s3sim").Elem("DisplayName", "s3sim").Close("Owner");
}

}  // namespace

HttpResponse HandleListBuckets(Store& store, const S3Request& /*r*/) {
  XmlWriter xml("ListAllMyBucketsResult");
  AddOwner(xml);
  xml.Open("Buckets");
  for (const BucketInfo& b : store.ListBuckets()) {
    xml.Open("Bucket").Elem("Name", b.name).Elem("CreationDate", IsoDate(b.created));
    xml.Close("Bucket");
  }
  xml.Close("Buckets");
  return XmlResponse(200, xml.Finish());
}

HttpResponse HandleCreateBucket(Store& store, const S3Request& r) {
  if (!ValidBucketName(r.bucket)) {
    return ErrorResponse({400, "InvalidBucketName", "The specified bucket is not valid."}, r);
  }
  if (!store.CreateBucket(r.bucket)) {
    return ErrorResponse({409, "BucketAlreadyOwnedByYou",
                          "Your previous request to create the named bucket succeeded and you "
                          "already own it."},
                         r);
  }
  HttpResponse resp;
  resp.AddHeader("Location", "/" + r.bucket);
  return resp;
}

HttpResponse HandleDeleteBucket(Store& store, const S3Request& r) {
  if (auto err = store.DeleteBucket(r.bucket)) return ErrorResponse(*err, r);
  HttpResponse resp;
  resp.status = 204;
  return resp;
}

HttpResponse HandleHeadBucket(Store& store, const S3Request& r) {
  if (!store.BucketExists(r.bucket)) return ErrorResponse(NoSuchBucket(), r);
  HttpResponse resp;
  resp.AddHeader("x-amz-bucket-region", "us-east-1");
  return resp;
}

HttpResponse HandleGetBucketLocation(Store& store, const S3Request& r) {
  if (!store.BucketExists(r.bucket)) return ErrorResponse(NoSuchBucket(), r);
  return XmlResponse(200,
                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint "
                     "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>");
}

HttpResponse HandleListObjects(Store& store, const S3Request& r, bool v2) {
  ListParams p;
  p.prefix = r.Q("prefix");
  p.delimiter = r.Q("delimiter");
  if (r.Has("max-keys")) {
    auto n = ParseU64(r.Q("max-keys"));
    if (!n)
      return ErrorResponse(
          {400, "InvalidArgument", "Provided max-keys not an integer or within integer range"}, r);
    p.max_keys = static_cast<int>(std::min<uint64_t>(*n, 1000));
  }
  bool url = false;
  if (r.Has("encoding-type")) {
    if (r.Q("encoding-type") != "url") {
      return ErrorResponse({400, "InvalidArgument", "Invalid Encoding Method specified in Request"},
                           r);
    }
    url = true;
  }
  if (v2) {
    p.start_after = r.Q("start-after");
    if (r.Has("continuation-token")) {
      auto raw = Unbase64(r.Q("continuation-token"));
      if (!raw || raw->rfind(kTokenTag, 0) != 0 || raw->size() == sizeof kTokenTag - 1) {
        return ErrorResponse(
            {400, "InvalidArgument", "The continuation token provided is incorrect"}, r);
      }
      p.resume_at = raw->substr(sizeof kTokenTag - 1);
    }
  } else {
    p.start_after = r.Q("marker");
    // A v1 NextMarker may be a common prefix: resume after everything under it
    // instead of rolling its keys up into the same prefix again.
    const std::string& m = p.start_after;
    if (!p.delimiter.empty() && m.size() >= p.delimiter.size() &&
        m.compare(m.size() - p.delimiter.size(), p.delimiter.size(), p.delimiter) == 0 &&
        m.compare(0, p.prefix.size(), p.prefix) == 0) {
      p.resume_at = PrefixSuccessor(m);
    }
  }
  auto page = store.List(r.bucket, p);
  if (!page.ok()) return ErrorResponse(page.error(), r);

  auto enc = [url](const std::string& s) { return url ? UriEncode(s, false) : s; };
  XmlWriter xml("ListBucketResult");
  xml.Elem("Name", r.bucket).Elem("Prefix", enc(p.prefix));
  if (v2) {
    if (r.Has("continuation-token")) xml.Elem("ContinuationToken", r.Q("continuation-token"));
    if (r.Has("start-after")) xml.Elem("StartAfter", enc(p.start_after));
    xml.Elem("KeyCount", static_cast<long long>(page->contents.size()) +
                             static_cast<long long>(page->common_prefixes.size()));
  } else {
    xml.Elem("Marker", enc(p.start_after));
  }
  xml.Elem("MaxKeys", static_cast<long long>(p.max_keys));
  if (!p.delimiter.empty()) xml.Elem("Delimiter", enc(p.delimiter));
  if (url) xml.Elem("EncodingType", "url");
  xml.Elem("IsTruncated", page->truncated);
  if (page->truncated) {
    if (v2) {
      xml.Elem("NextContinuationToken", Base64(kTokenTag + page->next_key));
    } else if (!p.delimiter.empty()) {
      // v1 NextMarker: the last key or prefix returned (resume is exclusive).
      std::string last = page->contents.empty() ? "" : page->contents.back().first;
      if (!page->common_prefixes.empty() && page->common_prefixes.back() > last) {
        last = page->common_prefixes.back();
      }
      xml.Elem("NextMarker", enc(last));
    }
  }
  for (const auto& [key, obj] : page->contents) {
    xml.Open("Contents").Elem("Key", enc(key)).Elem("LastModified", IsoDate(obj->mtime));
    xml.Elem("ETag", obj->etag).Elem("Size", static_cast<long long>(obj->data->size()));
    if (!v2 || r.Q("fetch-owner") == "true") AddOwner(xml);
    xml.Elem("StorageClass", "STANDARD").Close("Contents");
  }
  for (const std::string& cp : page->common_prefixes) {
    xml.Open("CommonPrefixes").Elem("Prefix", enc(cp)).Close("CommonPrefixes");
  }
  return XmlResponse(200, xml.Finish());
}

HttpResponse HandleDeleteObjects(Store& store, const S3Request& r) {
  const std::string& body = r.http->body;
  bool has_checksum = r.Header("content-md5") != nullptr;
  for (const auto& [k, v] : r.http->headers) {
    if (k.rfind("x-amz-checksum-", 0) == 0) has_checksum = true;
  }
  if (!has_checksum) {
    return ErrorResponse(
        {400, "InvalidRequest", "Missing required header for this request: Content-MD5"}, r);
  }
  if (auto err = CheckContentMd5(r, body)) return ErrorResponse(*err, r);
  if (!store.BucketExists(r.bucket)) return ErrorResponse(NoSuchBucket(), r);
  pugi::xml_document doc;
  S3Error malformed{400, "MalformedXML",
                    "The XML you provided was not well-formed or did not validate against our "
                    "published schema"};
  if (!doc.load_buffer(body.data(), body.size())) return ErrorResponse(malformed, r);
  pugi::xml_node root = doc.child("Delete");
  if (!root) return ErrorResponse(malformed, r);
  bool quiet = std::string(root.child_value("Quiet")) == "true";
  std::vector<std::string> keys;
  for (pugi::xml_node o : root.children("Object")) {
    pugi::xml_node k = o.child("Key");
    if (!k) return ErrorResponse(malformed, r);
    keys.emplace_back(k.child_value());
  }
  if (keys.empty() || keys.size() > 1000) return ErrorResponse(malformed, r);
  XmlWriter xml("DeleteResult");
  for (const std::string& key : keys) {
    if (key.empty() || key.size() > 1024) {
      xml.Open("Error").Elem("Key", key).Elem("Code", "InvalidArgument");
      xml.Elem("Message", "Invalid key").Close("Error");
      continue;
    }
    store.Delete(r.bucket, key);
    if (!quiet) xml.Open("Deleted").Elem("Key", key).Close("Deleted");
  }
  return XmlResponse(200, xml.Finish());
}

}  // namespace s3sim
