#include "tests/s3sim/object.h"

#include "tests/s3sim/util.h"

namespace s3sim {

std::string SinglePartEtag(std::string_view data) { return "\"" + Hex(Md5(data)) + "\""; }

std::string SinglePartEtag(const Body& data) { return "\"" + Hex(data.Md5()) + "\""; }

std::string MultipartEtag(const std::vector<std::string>& part_md5s) {
  std::string concat;
  for (const std::string& m : part_md5s) concat += m;
  return "\"" + Hex(Md5(concat)) + "-" + std::to_string(part_md5s.size()) + "\"";
}

std::string_view Unquote(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    return etag.substr(1, etag.size() - 2);
  }
  return etag;
}

}  // namespace s3sim
