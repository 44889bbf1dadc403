// `bucketfs status [--once] [MOUNTPOINT]`: a live view of mounts from their
// control sockets (control_socket.h), refreshed every second like top while
// stdout is a terminal; one sample (over one second) with --once or when
// stdout is not a terminal. Without MOUNTPOINT: every bucketfs mount of
// /proc/self/mountinfo and every control socket of this user; sockets whose
// daemon is gone are removed, and said so.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mount-tools/commands.h"
#include "mount-tools/control_paths.h"
#include "mount-tools/control_protocol.h"
#include "mount-tools/control_socket.h"
#include "mount-tools/status_snapshot.h"

namespace bucketfs::tools {
namespace {

constexpr auto kInterval = std::chrono::seconds(1);

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string UnescapeOctal(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Mount points of fuse.bucketfs in /proc/self/mountinfo.
std::vector<std::string> BucketfsMounts() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype != "fuse.bucketfs") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mountpoint;
    head >> id >> parent >> dev >> root >> mountpoint;
    out.push_back(UnescapeOctal(mountpoint));
  }
  return out;
}

std::vector<std::string> SocketFiles(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.ends_with(".sock")) out.push_back(dir + "/" + name);
  }
  ::closedir(d);
  return out;
}

struct Target {
  std::string mountpoint;
  std::string socket;
};

// One sample of each target; a stale socket is removed and reported once.
std::vector<Snapshot> Sample(std::vector<Target>& targets, std::string& notes) {
  std::vector<Snapshot> out;
  for (auto it = targets.begin(); it != targets.end();) {
    auto reply = SendControlCommand(it->socket, "status");
    if (reply.ok()) {
      out.push_back(ParseKeyValues(*reply));
      ++it;
      continue;
    }
    const int e = reply.error().errno_value;
    if (e == ECONNREFUSED) {
      ::unlink(it->socket.c_str());
      notes += "removed stale control socket " + it->socket + " (its daemon is gone)\n";
    } else if (e == ENOENT) {
      notes += it->mountpoint + ": no control socket at " + it->socket +
               " (not a bucketfs mount of this user, or one without a control socket)\n";
    } else {
      notes += it->mountpoint + ": " + reply.error().message + "\n";
    }
    it = targets.erase(it);
  }
  return out;
}

std::string Render(const std::vector<Snapshot>& now, const std::vector<Snapshot>& before) {
  std::string out;
  for (const Snapshot& s : now) {
    const Snapshot* prev = nullptr;
    for (const Snapshot& b : before) {
      if (b.at("mountpoint") == s.at("mountpoint")) prev = &b;
    }
    out += RenderStatus(s, prev) + "\n";
  }
  return out;
}

void PrintUsage(FILE* out) {
  std::fputs(
      "usage: bucketfs status [--once] [MOUNTPOINT]\n"
      "Shows each mount's throughput, S3 requests, errors, memory and cache hits, refreshed\n"
      "every second while stdout is a terminal (q or Ctrl-C to quit). --once (or a pipe):\n"
      "one sample over one second, as plain text. Without MOUNTPOINT: every mount.\n",
      out);
}

}  // namespace

int RunStatusCommand(int argc, char** argv) {
  bool once = !::isatty(STDOUT_FILENO);
  std::string mountpoint;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      PrintUsage(stdout);
      return 0;
    }
    if (a == "--once") {
      once = true;
    } else if (a.starts_with("-") || !mountpoint.empty()) {
      std::fprintf(stderr, "bucketfs status: unexpected argument '%s'\n", a.c_str());
      PrintUsage(stderr);
      return 2;
    } else {
      mountpoint = a;
    }
  }
  const std::string dir = ControlSocketDir();
  std::vector<Target> targets;
  if (!mountpoint.empty()) {
    const std::string canonical = CanonicalPath(mountpoint);
    targets.push_back({canonical, ControlSocketPath(dir, canonical)});
  } else {
    std::set<std::string> seen;
    for (const std::string& m : BucketfsMounts()) {
      const std::string socket = ControlSocketPath(dir, m);
      if (seen.insert(socket).second) targets.push_back({m, socket});
    }
    for (const std::string& socket : SocketFiles(dir)) {
      if (seen.insert(socket).second) targets.push_back({"(socket) " + socket, socket});
    }
  }
  std::string notes;
  std::vector<Snapshot> before = Sample(targets, notes);
  std::fputs(notes.c_str(), stderr);
  if (targets.empty()) {
    std::fprintf(stderr,
                 mountpoint.empty() ? "bucketfs status: no bucketfs mounts\n"
                                    : "bucketfs status: %s is not a bucketfs mount that "
                                      "answers status\n",
                 mountpoint.c_str());
    return 1;
  }
  for (;;) {
    std::this_thread::sleep_for(kInterval);
    notes.clear();
    std::vector<Snapshot> now = Sample(targets, notes);
    const std::string text = Render(now, before);
    if (once) {
      std::fputs(text.c_str(), stdout);
      std::fputs(notes.c_str(), stderr);
      return now.empty() ? 1 : 0;
    }
    // Home, clear: redraw in place like top.
    std::printf("\x1b[H\x1b[2Jbucketfs status  (every %llds, Ctrl-C to quit)\n\n%s%s",
                static_cast<long long>(kInterval.count()), text.c_str(), notes.c_str());
    std::fflush(stdout);
    if (now.empty()) return 1;
    before = std::move(now);
  }
}

}  // namespace bucketfs::tools
