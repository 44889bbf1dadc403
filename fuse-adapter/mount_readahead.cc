#include "fuse-adapter/mount_readahead.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace bucketfs::fs {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string_view::npos) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

std::optional<std::string> MountDeviceFromMountinfo(std::string_view mountinfo,
                                                    const std::string& mountpoint) {
  std::optional<std::string> found;
  size_t pos = 0;
  while (pos < mountinfo.size()) {
    size_t eol = mountinfo.find('\n', pos);
    if (eol == std::string_view::npos) eol = mountinfo.size();
    const std::string_view line = mountinfo.substr(pos, eol - pos);
    pos = eol + 1;
    // id parent MAJ:MIN root mountpoint options ...
    std::vector<std::string_view> fields;
    size_t f = 0;
    while (f < line.size() && fields.size() < 5) {
      const size_t sp = line.find(' ', f);
      const size_t end = sp == std::string_view::npos ? line.size() : sp;
      fields.push_back(line.substr(f, end - f));
      f = end + 1;
    }
    if (fields.size() == 5 && Unescape(fields[4]) == mountpoint) found = std::string(fields[2]);
  }
  return found;  // the last one: a mount over an earlier mount at the same place
}

Status SetMountReadahead(const std::string& mountpoint, uint64_t bytes) {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  const auto dev = MountDeviceFromMountinfo(text.str(), mountpoint);
  if (!dev) return MakeError(ENOENT, "Readahead", "no mount at " + mountpoint + " in mountinfo");
  const std::string path = "/sys/class/bdi/" + *dev + "/read_ahead_kb";
  std::ofstream out(path);
  out << (bytes >> 10) << '\n';
  out.flush();
  if (!out) {
    const int err = errno != 0 ? errno : EACCES;
    return MakeError(err, "Readahead", "cannot write " + path + ": " + strerror(err));
  }
  return Status::Ok();
}

}  // namespace bucketfs::fs
