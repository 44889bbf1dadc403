// ListObjectsV2 paging over a sorted key map, as a pure function so that the
// delimiter / common-prefix / continuation rules are unit-tested directly.
//
// Rules (S3): keys are in binary (UTF-8 byte) order; with a delimiter, a key
// whose remainder after the prefix contains the delimiter is rolled up into
// the common prefix ending at its first delimiter, which counts once against
// max-keys; a page resumes at the first key it did not return.
#ifndef TESTS_S3SIM_LISTING_H_
#define TESTS_S3SIM_LISTING_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/s3sim/object.h"

namespace s3sim {

struct ListParams {
  std::string prefix;
  std::string delimiter;
  std::string start_after;  // exclusive
  std::string resume_at;    // inclusive (decoded continuation token); wins over start_after
  int max_keys = 1000;
};

struct ListPage {
  std::vector<std::pair<std::string, ObjectPtr>> contents;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_key;  // where the next page resumes (inclusive) when truncated
};

ListPage ListKeys(const std::map<std::string, ObjectPtr>& objects, const ListParams& params);

// The smallest string greater than every string that starts with `prefix`
// ("" when there is none, i.e. prefix is all 0xff bytes).
std::string PrefixSuccessor(const std::string& prefix);

}  // namespace s3sim

#endif  // TESTS_S3SIM_LISTING_H_
