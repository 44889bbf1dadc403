// S3 error responses -> Error. Holds the one S3-code -> errno table.
//
// The body of a failed request may be S3's <Error> XML, nothing at all (HEAD,
// some proxies), an HTML page from a load balancer, or XML cut short. The
// parser takes what it can trust (a well-formed <Error>) and otherwise lets
// the HTTP status decide; it never throws and never fails.
#include <algorithm>
#include <cctype>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "base/strings.h"
#include "s3/s3_executor.h"

namespace bucketfs::s3 {
namespace {

struct CodeErrno {
  std::string_view code;
  int errno_value;
};

// The table. Keep it sorted by theme; lookups are linear (rare path).
constexpr CodeErrno kTable[] = {
    // Missing things.
    {"NoSuchKey", ENOENT},
    {"NoSuchBucket", ENOENT},
    {"NoSuchUpload", ENOENT},
    {"NoSuchVersion", ENOENT},
    {"NotFound", ENOENT},  // HEAD 404 (no body)
    // Who you are / what you may do.
    {"AccessDenied", EACCES},
    {"Forbidden", EACCES},
    {"InvalidAccessKeyId", EACCES},
    {"SignatureDoesNotMatch", EACCES},
    {"AccountProblem", EACCES},
    {"AllAccessDisabled", EACCES},
    {"ExpiredToken", EACCES},
    {"InvalidToken", EACCES},
    {"TokenRefreshRequired", EACCES},
    {"RequestTimeTooSkewed", EACCES},
    {"MissingSecurityHeader", EACCES},
    {"InvalidSecurity", EACCES},
    {"AuthorizationHeaderMalformed", EACCES},
    // Bad requests. A 416 means the range starts past the end of the object
    // (the object shrank under a reader, or a caller bug): EINVAL, and the
    // code lets the read path turn it into EOF when it knows better.
    {"InvalidRange", EINVAL},
    {"InvalidArgument", EINVAL},
    {"InvalidBucketName", EINVAL},
    {"InvalidRequest", EINVAL},
    {"MalformedXML", EINVAL},
    {"InvalidPart", EINVAL},
    {"InvalidPartOrder", EINVAL},
    {"EntityTooSmall", EINVAL},
    {"InvalidDigest", EINVAL},
    {"MissingContentLength", EINVAL},
    {"BadRequest", EINVAL},
    {"EntityTooLarge", EFBIG},
    {"KeyTooLongError", ENAMETOOLONG},
    {"MetadataTooLarge", E2BIG},
    // Conflicts.
    {"BucketAlreadyExists", EEXIST},
    {"BucketAlreadyOwnedByYou", EEXIST},
    {"BucketNotEmpty", ENOTEMPTY},
    // Quotas and space.
    {"TooManyBuckets", EDQUOT},
    {"QuotaExceeded", EDQUOT},
    {"XMinioAdminBucketQuotaExceeded", EDQUOT},
    {"XMinioStorageFull", ENOSPC},
    {"InsufficientStorage", ENOSPC},
    {"StorageFull", ENOSPC},
    // Not supported by this server. ENOTSUP rather than ENOSYS: the kernel
    // treats ENOSYS from several FUSE ops as "never call this op again".
    {"NotImplemented", ENOTSUP},
    {"MethodNotAllowed", ENOTSUP},
    // The object changed under a conditional request (If-Match): the reader's
    // view is stale; EIO, and the code says why.
    {"PreconditionFailed", EIO},
    {"NotModified", EIO},
};

// Codes that a retry may cure, whatever the HTTP status.
constexpr std::string_view kRetryableCodes[] = {
    "RequestTimeout",       "SlowDown",        "InternalError",
    "ServiceUnavailable",   "Throttling",      "ThrottlingException",
    "RequestLimitExceeded", "TooManyRequests", "RequestThrottled",
    "IncompleteBody",       "BadDigest",       "OperationAborted",
};

bool IsRetryableCode(std::string_view code) {
  return std::find(std::begin(kRetryableCodes), std::end(kRetryableCodes), code) !=
         std::end(kRetryableCodes);
}

bool IsRetryableStatus(int status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// A code for responses that carry none (HEAD, empty or non-XML bodies).
std::string CodeForStatus(int status) {
  switch (status) {
    case 301:
      return "PermanentRedirect";
    case 304:
      return "NotModified";
    case 400:
      return "BadRequest";
    case 401:
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 411:
      return "MissingContentLength";
    case 412:
      return "PreconditionFailed";
    case 413:
      return "EntityTooLarge";
    case 416:
      return "InvalidRange";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 501:
      return "NotImplemented";
    case 502:
      return "BadGateway";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "GatewayTimeout";
    default:
      return "HTTP" + std::to_string(status);
  }
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Printable, single-line, bounded excerpt of a body for a human.
std::string Excerpt(std::string_view body, size_t max_chars) {
  std::string out;
  bool space = false;
  for (char ch : body) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (std::isspace(c) != 0) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(std::isprint(c) != 0 ? ch : '?');
  }
  return out;
}

const std::string* Header(const HttpHeaders& headers, std::string_view lower_name) {
  for (const auto& [name, value] : headers) {
    if (Lower(name) == lower_name) return &value;
  }
  return nullptr;
}

bool LooksLikeHtml(std::string_view body) {
  const std::string head = Lower(body.substr(0, 512));
  return head.find("<html") != std::string::npos ||
         head.find("<!doctype html") != std::string::npos;
}

std::string HtmlTitle(std::string_view body) {
  // Only a hint for the human reading the error; this is not protocol data.
  const std::string lower = Lower(body);
  const size_t open = lower.find("<title>");
  if (open == std::string::npos) return "";
  const size_t close = lower.find("</title>", open);
  if (close == std::string::npos) return "";
  return Excerpt(body.substr(open + 7, close - open - 7), 120);
}

}  // namespace

int ErrnoForS3Code(std::string_view code, int http_status) {
  for (const auto& entry : kTable) {
    if (entry.code == code) return entry.errno_value;
  }
  if (IsRetryableCode(code)) return EIO;
  switch (http_status) {
    case 400:
    case 411:
    case 416:
      return EINVAL;
    case 401:
    case 403:
      return EACCES;
    case 404:
      return ENOENT;
    case 405:
    case 501:
      return ENOTSUP;
    case 413:
      return EFBIG;
    default:
      return EIO;
  }
}

Error ParseS3Error(int http_status, std::string_view body, const HttpHeaders& headers) {
  Error e;
  e.http_status = http_status;
  if (const std::string* id = Header(headers, "x-amz-request-id")) e.request_id = *id;

  std::string code;
  std::string message;
  std::string extra;  // region / endpoint hints from redirects
  const std::string_view trimmed = base::Trim(body);
  if (trimmed.empty()) {
    message = "no error details in the response body";
  } else if (LooksLikeHtml(trimmed)) {
    const std::string title = HtmlTitle(trimmed);
    message = "server answered with an HTML page" + (title.empty() ? "" : ": " + title);
  } else if (trimmed.front() != '<') {
    message = "non-XML error body: " + Excerpt(trimmed, 160);
  } else {
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed =
        doc.load_buffer(trimmed.data(), trimmed.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
      // A truncated or malformed body: a partial tree could hold half a code
      // ("NoSu"), so nothing from it is trusted.
      message = std::string("malformed XML error body (") + parsed.description() + ")";
    } else {
      pugi::xml_node root = doc.child("Error");
      if (!root) root = doc.document_element();
      code = base::Trim(root.child("Code").text().as_string());
      message = base::Trim(root.child("Message").text().as_string());
      if (e.request_id.empty())
        e.request_id = base::Trim(root.child("RequestId").text().as_string());
      if (const char* region = root.child("Region").text().as_string(); *region != '\0') {
        extra += std::string(" (bucket region: ") + region + ")";
      }
      if (const char* endpoint = root.child("Endpoint").text().as_string(); *endpoint != '\0') {
        extra += std::string(" (use endpoint: ") + endpoint + ")";
      }
      if (code.empty() && message.empty()) message = "error body without <Code> or <Message>";
    }
  }
  if (code.empty()) code = CodeForStatus(http_status);
  if (message.empty()) message = "no message from the server";
  if (const std::string* region = Header(headers, "x-amz-bucket-region");
      region != nullptr && extra.find("bucket region") == std::string::npos) {
    extra += " (bucket region: " + *region + ")";
  }

  e.errno_value = ErrnoForS3Code(code, http_status);
  e.retryable = IsRetryableStatus(http_status) || IsRetryableCode(code);
  e.code = std::move(code);
  e.message = message + extra;
  return e;
}

}  // namespace bucketfs::s3
