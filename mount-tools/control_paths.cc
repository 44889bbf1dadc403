#include "mount-tools/control_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bucketfs::tools {

std::string ControlSocketDirFor(uid_t uid, std::string_view xdg_runtime_dir) {
  if (uid == 0) return "/run/bucketfs";
  if (!xdg_runtime_dir.empty()) return std::string(xdg_runtime_dir) + "/bucketfs";
  return "/tmp/bucketfs-" + std::to_string(uid);
}

std::string ControlSocketDir() {
  // Tests (and several daemons of one user kept apart) choose their own.
  if (const char* dir = std::getenv("BUCKETFS_CONTROL_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return ControlSocketDirFor(::getuid(), xdg != nullptr ? xdg : "");
}

Status MakeControlSocketDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return MakeError(errno, "ControlSocket", dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
    return MakeError(EPERM, "ControlSocket", dir + " is not a directory of this user");
  }
  return Status::Ok();
}

std::string EscapeMountpoint(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) return "-";
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == ':' || (c == '.' && i > 0);
    if (c == '/') {
      out += '-';
    } else if (plain) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string UnescapeMountpoint(std::string_view name) {
  if (name == "-") return "/";
  std::string out = "/";
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '-') {
      out += '/';
    } else if (name[i] == '\\' && i + 3 < name.size() && name[i + 1] == 'x') {
      out +=
          static_cast<char>(std::strtol(std::string(name.substr(i + 2, 2)).c_str(), nullptr, 16));
      i += 3;
    } else {
      out += name[i];
    }
  }
  return out;
}

std::string ControlSocketPath(const std::string& dir, std::string_view mountpoint) {
  return dir + "/" + EscapeMountpoint(mountpoint) + ".sock";
}

std::string CanonicalPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out = real;
  std::free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
  return out;
}

}  // namespace bucketfs::tools
