#include "tests/s3sim/listing.h"

namespace s3sim {

std::string PrefixSuccessor(const std::string& prefix) {
  std::string s = prefix;
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xff) s.pop_back();
  if (!s.empty()) s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

ListPage ListKeys(const std::map<std::string, ObjectPtr>& objects, const ListParams& params) {
  ListPage page;
  if (params.max_keys <= 0) return page;
  auto it = objects.lower_bound(params.prefix);
  if (!params.resume_at.empty()) {
    if (params.resume_at > params.prefix) it = objects.lower_bound(params.resume_at);
  } else if (!params.start_after.empty() && params.start_after >= params.prefix) {
    it = objects.upper_bound(params.start_after);
  }
  int count = 0;
  while (it != objects.end()) {
    const std::string& key = it->first;
    if (key.compare(0, params.prefix.size(), params.prefix) != 0) break;
    if (count == params.max_keys) {
      page.truncated = true;
      page.next_key = key;
      break;
    }
    ++count;
    size_t pos = params.delimiter.empty() ? std::string::npos
                                          : key.find(params.delimiter, params.prefix.size());
    if (pos == std::string::npos) {
      page.contents.emplace_back(key, it->second);
      ++it;
      continue;
    }
    std::string cp = key.substr(0, pos + params.delimiter.size());
    page.common_prefixes.push_back(cp);
    std::string after = PrefixSuccessor(cp);
    it = after.empty() ? objects.end() : objects.lower_bound(after);
  }
  return page;
}

}  // namespace s3sim
