// nullfs MOUNTPOINT [--files N] [--size BYTES] [--direct-io] [--keep-cache]
//        [--max-threads N] [-o OPT]...
// Mounts nullfs (null_fs.h) in the foreground until unmounted or signalled.
// The session is set up as bucketfs's fuse/fuse_session.cc does it: max_read
// 1 MiB, the mount's BDI readahead raised before INIT, a multithreaded loop
// with one cloned /dev/fuse descriptor per worker.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuse-adapter/fuse_adapter.h"
#include "fuse-adapter/mount_readahead.h"
#include "tests/nullfs/null_fs.h"

namespace {

using bucketfs::fs::kMaxIo;

int Usage() {
  std::fprintf(stderr,
               "usage: nullfs MOUNTPOINT [--files N] [--size BYTES[k|m|g]] [--direct-io]\n"
               "              [--keep-cache] [--max-threads N] [-o OPT]...\n");
  return 2;
}

bool ParseSize(const char* s, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s) return false;
  uint64_t mult = 1;
  switch (*end) {
    case '\0':
      break;
    case 'k':
    case 'K':
      mult = 1ull << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      mult = 1ull << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      mult = 1ull << 30;
      ++end;
      break;
    default:
      return false;
  }
  if (*end != '\0') return false;
  *out = v * mult;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  nullfs::Config config;
  std::string mountpoint;
  uint64_t threads = 16;  // bucketfs's --max-threads default
  std::vector<std::string> opts = {"fsname=nullfs", "subtype=nullfs",
                                   "max_read=" + std::to_string(kMaxIo), "default_permissions"};
  // "--name=value" is taken as "--name value".
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string w = argv[i];
    const size_t eq = w.find('=');
    if (w.rfind("--", 0) == 0 && eq != std::string::npos) {
      words.push_back(w.substr(0, eq));
      words.push_back(w.substr(eq + 1));
    } else {
      words.push_back(w);
    }
  }
  const int n = static_cast<int>(words.size());
  for (int i = 0; i < n; ++i) {
    const std::string& a = words[i];
    const bool has_value = i + 1 < n;
    if (a == "--files" && has_value) {
      if (!ParseSize(words[++i].c_str(), &config.files)) return Usage();
    } else if (a == "--size" && has_value) {
      if (!ParseSize(words[++i].c_str(), &config.size)) return Usage();
    } else if (a == "--max-threads" && has_value) {
      if (!ParseSize(words[++i].c_str(), &threads) || threads == 0) return Usage();
    } else if (a == "-o" && has_value) {
      opts.push_back(words[++i]);
    } else if (a == "--direct-io") {
      config.direct_io = true;
    } else if (a == "--keep-cache") {
      config.keep_cache = true;
    } else if (a == "-f") {
      // always in the foreground (accepted for symmetry with the daemons)
    } else if (mountpoint.empty() && !a.empty() && a[0] != '-') {
      mountpoint = a;
    } else {
      return Usage();
    }
  }
  if (mountpoint.empty()) return Usage();
  char real[PATH_MAX];
  if (realpath(mountpoint.c_str(), real) == nullptr) {
    std::fprintf(stderr, "nullfs: %s: %s\n", mountpoint.c_str(), std::strerror(errno));
    return 1;
  }
  const std::string canonical = real;

  nullfs::NullFs fs(config, kMaxIo);
  std::vector<std::string> args = {"nullfs"};
  for (const auto& o : opts) {
    args.emplace_back("-o");
    args.push_back(o);
  }
  std::vector<char*> cargs;
  cargs.reserve(args.size());
  for (auto& a : args) cargs.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(cargs.size()), cargs.data());
  const fuse_lowlevel_ops& ops = nullfs::Operations();
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof(ops), &fs);
  fuse_opt_free_args(&fargs);
  if (se == nullptr) return 1;
  if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, canonical.c_str()) != 0) {
    fuse_session_destroy(se);
    return 1;
  }
  if (auto s = bucketfs::fs::SetMountReadahead(canonical, bucketfs::fs::kMaxReadahead); !s.ok()) {
    std::fprintf(stderr, "nullfs: kernel readahead left at its default: %s\n",
                 s.error().message.c_str());
  }
  std::fprintf(stderr, "nullfs: %llu files of %llu bytes at %s%s%s\n",
               static_cast<unsigned long long>(config.files),
               static_cast<unsigned long long>(config.size), canonical.c_str(),
               config.direct_io ? ", direct I/O" : "", config.keep_cache ? ", keep_cache" : "");

  fuse_loop_config* loop = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(loop, 1);
  fuse_loop_cfg_set_max_threads(loop, static_cast<unsigned>(threads));
  fuse_loop_cfg_set_idle_threads(loop, static_cast<unsigned>(threads));
  const int r = fuse_session_loop_mt(se, loop);
  fuse_loop_cfg_destroy(loop);
  fuse_remove_signal_handlers(se);
  fuse_session_unmount(se);
  fuse_session_destroy(se);
  return r < 0 ? 1 : 0;
}
