// GetObject / HeadObject, PutObject, CopyObject, DeleteObject.
#include <ctime>
#include <memory>
#include <optional>

#include "tests/s3sim/crc32c.h"
#include "tests/s3sim/handlers.h"
#include "tests/s3sim/range.h"
#include "tests/s3sim/util.h"
#include "tests/s3sim/xml_writer.h"

namespace s3sim {
namespace {

// True when `etag` matches one entry of an If-Match / If-None-Match list.
bool EtagListMatches(std::string_view list, std::string_view etag) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = Trim(list.substr(pos, comma - pos), kSpaceOrTab);
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);
    if (item == "*" || Unquote(item) == Unquote(etag)) return true;
    pos = comma + 1;
  }
  return false;
}

std::optional<std::time_t> ParseHttpDate(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return timegm(&tm);
}

// If-Unmodified-Since / If-Modified-Since as S3 applies them: 412, 304, or
// nullopt (go on). An ETag condition present takes precedence over its date
// counterpart.
std::optional<int> DateConditions(const S3Request& r, std::time_t mtime, bool has_if_match,
                                  bool has_if_none_match) {
  if (const std::string* ius = r.Header("if-unmodified-since"); ius && !has_if_match) {
    if (auto t = ParseHttpDate(*ius); t && mtime > *t) return 412;
  }
  if (const std::string* ims = r.Header("if-modified-since"); ims && !has_if_none_match) {
    if (auto t = ParseHttpDate(*ims); t && mtime <= *t) return 304;
  }
  return std::nullopt;
}

void AddObjectHeaders(HttpResponse& resp, const Object& obj) {
  resp.AddHeader("ETag", obj.etag);
  resp.AddHeader("Last-Modified", HttpDate(obj.mtime));
  resp.AddHeader("Content-Type", obj.content_type);
  resp.AddHeader("Accept-Ranges", "bytes");
  for (const auto& [k, v] : obj.metadata) resp.AddHeader(k, v);
}

}  // namespace

HeaderList StoredHeaders(const HttpRequest& req) {
  HeaderList out;
  for (const auto& [k, v] : req.headers) {
    if (k.rfind("x-amz-meta-", 0) == 0 || k == "cache-control" || k == "content-disposition" ||
        k == "content-encoding" || k == "content-language" || k == "expires") {
      out.emplace_back(k, v);
    }
  }
  return out;
}

std::optional<S3Error> CheckContentMd5(const S3Request& r, std::string_view body) {
  const std::string* md5 = r.Header("content-md5");
  if (md5 == nullptr) return std::nullopt;
  auto raw = Unbase64(*md5);
  if (!raw || raw->size() != 16) {
    return S3Error{400, "InvalidDigest", "The Content-MD5 you specified was invalid."};
  }
  if (*raw != Md5(body)) {
    return S3Error{400, "BadDigest",
                   "The Content-MD5 you specified did not match what we received."};
  }
  return std::nullopt;
}

std::optional<S3Error> CheckChecksumCrc32c(const S3Request& r, std::string_view body) {
  const std::string* sum = r.Header("x-amz-checksum-crc32c");
  if (sum == nullptr) return std::nullopt;
  auto raw = Unbase64(*sum);
  if (!raw || raw->size() != 4) {
    return S3Error{400, "InvalidRequest", "Value for x-amz-checksum-crc32c header is invalid."};
  }
  if (Base64(*raw) != Crc32cBase64(body)) {  // compares bytes, not spellings
    return S3Error{400, "BadDigest",
                   "The CRC32C you specified did not match the calculated checksum."};
  }
  return std::nullopt;
}

void EchoChecksum(const S3Request& r, HttpResponse& resp) {
  if (resp.status != 200) return;
  if (const std::string* sum = r.Header("x-amz-checksum-crc32c")) {
    resp.AddHeader("x-amz-checksum-crc32c", *sum);
  }
}

Expected<std::pair<std::string, std::string>> ParseCopySource(const std::string& value) {
  std::string_view v = value;
  v = v.substr(0, v.find('?'));
  auto decoded = UriDecode(v);
  S3Error bad{400, "InvalidArgument", "Invalid copy source"};
  if (!decoded) return bad;
  std::string_view d = *decoded;
  if (!d.empty() && d.front() == '/') d.remove_prefix(1);
  size_t slash = d.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == d.size()) return bad;
  return std::make_pair(std::string(d.substr(0, slash)), std::string(d.substr(slash + 1)));
}

HttpResponse HandleGetObject(Store& store, const S3Request& r) {
  auto found = store.Get(r.bucket, r.key);
  if (!found.ok()) return ErrorResponse(found.error(), r);
  const ObjectPtr& obj = *found;
  if (const std::string* im = r.Header("if-match"); im && !EtagListMatches(*im, obj->etag)) {
    return ErrorResponse({412, "PreconditionFailed",
                          "At least one of the pre-conditions you specified did not hold"},
                         r);
  }
  if (const std::string* inm = r.Header("if-none-match"); inm && EtagListMatches(*inm, obj->etag)) {
    HttpResponse resp;
    resp.status = 304;
    resp.AddHeader("ETag", obj->etag);
    resp.AddHeader("Last-Modified", HttpDate(obj->mtime));
    return resp;
  }
  if (auto status = DateConditions(r, obj->mtime, r.Header("if-match") != nullptr,
                                   r.Header("if-none-match") != nullptr)) {
    if (status == 412) {
      return ErrorResponse({412, "PreconditionFailed",
                            "At least one of the pre-conditions you specified did not hold"},
                           r);
    }
    HttpResponse resp;
    resp.status = 304;
    resp.AddHeader("ETag", obj->etag);
    resp.AddHeader("Last-Modified", HttpDate(obj->mtime));
    return resp;
  }
  const uint64_t size = obj->data->size();
  HttpResponse resp;
  resp.data = obj->data;
  resp.data_offset = 0;
  resp.data_length = size;
  if (const std::string* range = r.Header("range")) {
    RangeResult rr = ParseRange(*range, size);
    if (rr.kind == RangeResult::Kind::kUnsatisfiable) {
      HttpResponse err =
          ErrorResponse({416, "InvalidRange", "The requested range is not satisfiable"}, r);
      err.AddHeader("Content-Range", "bytes */" + std::to_string(size));
      return err;
    }
    if (rr.kind == RangeResult::Kind::kPartial) {
      resp.status = 206;
      resp.data_offset = rr.first;
      resp.data_length = rr.last - rr.first + 1;
      resp.AddHeader("Content-Range", "bytes " + std::to_string(rr.first) + "-" +
                                          std::to_string(rr.last) + "/" + std::to_string(size));
    }
  }
  AddObjectHeaders(resp, *obj);
  // response-* query parameters override the stored representation headers.
  static constexpr std::pair<const char*, const char*> kOverrides[] = {
      {"response-content-type", "Content-Type"},
      {"response-content-disposition", "Content-Disposition"},
      {"response-content-encoding", "Content-Encoding"},
      {"response-content-language", "Content-Language"},
      {"response-cache-control", "Cache-Control"},
      {"response-expires", "Expires"}};
  for (const auto& [param, header] : kOverrides) {
    if (!r.Has(param)) continue;
    std::string lower = ToLower(header);
    std::erase_if(resp.headers, [&](const auto& h) { return ToLower(h.first) == lower; });
    resp.AddHeader(header, r.Q(param));
  }
  return resp;
}

HttpResponse HandlePutObject(Store& store, S3Request& r) {
  std::string& body = r.http->body;
  if (auto err = CheckContentMd5(r, body)) return ErrorResponse(*err, r);
  if (auto err = CheckChecksumCrc32c(r, body)) return ErrorResponse(*err, r);
  if (!store.BucketExists(r.bucket)) return ErrorResponse(NoSuchBucket(), r);
  // Conditional writes: If-None-Match: * and If-Match: <etag>.
  const std::string* inm = r.Header("if-none-match");
  const std::string* im = r.Header("if-match");
  if (inm || im) {
    auto cur = store.Get(r.bucket, r.key);
    if ((inm && cur.ok()) || (im && (!cur.ok() || !EtagListMatches(*im, (*cur)->etag)))) {
      if (im && !cur.ok()) return ErrorResponse(NoSuchKey(), r);
      return ErrorResponse({412, "PreconditionFailed",
                            "At least one of the pre-conditions you specified did not hold"},
                           r);
    }
  }
  auto obj = std::make_shared<Object>();
  obj->etag = SinglePartEtag(body);
  obj->mtime = std::time(nullptr);
  if (const std::string* ct = r.Header("content-type")) obj->content_type = *ct;
  obj->metadata = StoredHeaders(*r.http);
  obj->data = std::make_shared<const Body>(std::move(body));
  std::string etag = obj->etag;
  if (auto err = store.Put(r.bucket, r.key, std::move(obj))) return ErrorResponse(*err, r);
  HttpResponse resp;
  resp.AddHeader("ETag", etag);
  EchoChecksum(r, resp);
  return resp;
}

HttpResponse HandleCopyObject(Store& store, const S3Request& r) {
  auto src = ParseCopySource(*r.Header("x-amz-copy-source"));
  if (!src.ok()) return ErrorResponse(src.error(), r);
  auto found = store.Get(src->first, src->second);
  if (!found.ok()) return ErrorResponse(found.error(), r);
  const ObjectPtr& from = *found;
  if (const std::string* im = r.Header("x-amz-copy-source-if-match");
      im && !EtagListMatches(*im, from->etag)) {
    return ErrorResponse({412, "PreconditionFailed",
                          "At least one of the pre-conditions you specified did not hold"},
                         r);
  }
  const std::string* directive = r.Header("x-amz-metadata-directive");
  bool replace = directive != nullptr && *directive == "REPLACE";
  if (directive != nullptr && !replace && *directive != "COPY") {
    return ErrorResponse({400, "InvalidArgument", "Unknown metadata directive."}, r);
  }
  if (!replace && src->first == r.bucket && src->second == r.key) {
    return ErrorResponse(
        {400, "InvalidRequest",
         "This copy request is illegal because it is trying to copy an object to itself "
         "without changing the object's metadata, storage class, website redirect location or "
         "encryption attributes."},
        r);
  }
  auto obj = std::make_shared<Object>(*from);  // shares the data buffer
  obj->mtime = std::time(nullptr);
  if (from->etag.find('-') != std::string::npos) obj->etag = SinglePartEtag(*from->data);
  if (replace) {
    const std::string* ct = r.Header("content-type");
    obj->content_type = ct ? *ct : "binary/octet-stream";
    obj->metadata = StoredHeaders(*r.http);
  }
  std::string etag = obj->etag;
  std::time_t mtime = obj->mtime;
  if (auto err = store.Put(r.bucket, r.key, std::move(obj))) return ErrorResponse(*err, r);
  XmlWriter xml("CopyObjectResult");
  xml.Elem("LastModified", IsoDate(mtime)).Elem("ETag", etag);
  return XmlResponse(200, xml.Finish());
}

HttpResponse HandleDeleteObject(Store& store, const S3Request& r) {
  if (auto err = store.Delete(r.bucket, r.key)) return ErrorResponse(*err, r);
  HttpResponse resp;
  resp.status = 204;
  return resp;
}

}  // namespace s3sim
