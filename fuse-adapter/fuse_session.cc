// RunFuseSession: mount, serve on libfuse's multithreaded loop, finish
// uploads, unmount (see fuse_session.h).
#include "fuse-adapter/fuse_session.h"

#include <fcntl.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "fuse-adapter/fuse_adapter.h"
#include "fuse-adapter/init_flags_io.h"
#include "fuse-adapter/mount_readahead.h"
#include "fuse-adapter/passthrough.h"
#include "fuse/filesystem.h"

// LeakSanitizer (ASan builds) reads this at exit. A daemon that hands its
// mount over must not unmount it, and libfuse frees the mountpoint string
// fuse_session_mount copied only in fuse_session_unmount: that one string
// is left at exit by design.
extern "C" const char* __lsan_default_suppressions() {  // NOLINT(bugprone-reserved-identifier)
  return "leak:fuse_session_mount\n";
}

namespace bucketfs::fs {
namespace {

bool HasOption(const std::vector<std::string>& options, const std::string& name) {
  return std::any_of(options.begin(), options.end(), [&](const std::string& o) {
    return o == name || o.rfind(name + "=", 0) == 0;
  });
}

// The argv libfuse parses: our defaults, then the caller's -o entries.
std::vector<std::string> SessionArgs(const FsConfig& config, const FuseMountOptions& mount) {
  std::vector<std::string> opts = mount.fuse_options;
  auto add = [&](const std::string& o) {
    const std::string name = o.substr(0, o.find('='));
    if (!HasOption(opts, name)) opts.push_back(o);
  };
  add("fsname=s3://" + config.bucket + (config.bucket.empty() ? "" : "/" + config.prefix));
  add("subtype=bucketfs");
  add("max_read=" + std::to_string(kMaxIo));
  add("default_permissions");  // the kernel checks the mode bits we report
  if (mount.allow_other) add("allow_other");
  if (mount.allow_root) add("allow_root");
  if (config.read_only) add("ro");
  std::vector<std::string> args = {"bucketfs"};
  if (mount.debug) args.emplace_back("-d");
  for (const auto& o : opts) {
    args.emplace_back("-o");
    args.push_back(o);
  }
  return args;
}

InitFlagsIo& Io(void* userdata) { return *static_cast<SessionData*>(userdata)->init_io; }

// The session's /dev/fuse I/O through InitFlagsIo. The splice callbacks do
// what libfuse does without custom I/O (its splice capabilities depend on
// their presence).
fuse_custom_io InitFlagsCustomIo() {
  fuse_custom_io io{};
  io.read = [](int fd, void* buf, size_t len, void* userdata) {
    return Io(userdata).Read(fd, buf, len);
  };
  io.writev = [](int fd, iovec* iov, int count, void* userdata) {
    return Io(userdata).Writev(fd, iov, count);
  };
  io.splice_receive = [](int fdin, off_t* offin, int fdout, off_t* offout, size_t len,
                         unsigned int flags, void* /*userdata*/) {
    return splice(fdin, offin, fdout, offout, len, flags);
  };
  io.splice_send = [](int fdin, off_t* offin, int fdout, off_t* offout, size_t len,
                      unsigned int flags, void* /*userdata*/) {
    return splice(fdin, offin, fdout, offout, len, flags);
  };
  return io;
}

Status CheckMountpoint(const std::string& path) {
  struct stat st {};
  if (path.empty()) return MakeError(EINVAL, "Mountpoint", "no mount point given");
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return MakeError(err, "Mountpoint", "cannot use mount point " + path + ": " + strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ENOTDIR, "Mountpoint", "mount point " + path + " is not a directory");
  }
  return Status::Ok();
}

// Tests of readiness (tests/mount/e2e_notify.sh) widen the gap between the
// mount report and the loop's start, so that "ready" sent too early shows.
void DelayLoopStartForTests() {
  const char* ms = std::getenv("BUCKETFS_TEST_LOOP_START_DELAY_MS");
  if (ms == nullptr) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
}

// Unmounts a mount this session took over (libfuse knows no mountpoint for
// it): lazily, as libfuse unmounts its own, so open files do not block it.
void DetachTakenOverMount(const std::string& mountpoint) {
  if (geteuid() == 0) {
    if (umount2(mountpoint.c_str(), MNT_DETACH) != 0) {
      spdlog::warn("cannot unmount {}: {}", mountpoint, strerror(errno));
    }
    return;
  }
  const char* argv[] = {"fusermount3", "-u", "-z", "--", mountpoint.c_str(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "fusermount3", nullptr, nullptr, const_cast<char* const*>(argv),
                   environ) != 0) {
    spdlog::warn("cannot run fusermount3 to unmount {}", mountpoint);
    return;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    spdlog::warn("fusermount3 -u -z {} failed", mountpoint);
  }
}

}  // namespace

int RunFuseSession(Filesystem& fs, const FuseMountOptions& mount,
                   std::function<void(Status)> on_mount_result, const SessionHandover* handover,
                   FuseObserver* observer) {
  return RunFuseSession(fs, mount, FuseSessionEvents{.on_mount_result = std::move(on_mount_result)},
                        handover, observer);
}

int RunFuseSession(Filesystem& fs, const FuseMountOptions& mount, FuseSessionEvents events,
                   const SessionHandover* handover, FuseObserver* observer) {
  const FsConfig& config = fs.config();
  auto report = [&](Status s) {
    if (events.on_mount_result) events.on_mount_result(std::move(s));
    events.on_mount_result = nullptr;
  };
  const bool takeover = handover != nullptr && handover->takeover_fd >= 0;
  // Checking a mountpoint this process is about to serve would wait on itself.
  if (Status s = takeover ? Status::Ok() : CheckMountpoint(mount.mountpoint); !s.ok()) {
    spdlog::error("{}", s.error().message);
    report(s);
    return 1;
  }

  // Canonical now: after the mount, resolving it would wait on our own root.
  std::string canonical = mount.mountpoint;
  if (char* real = takeover ? nullptr : realpath(mount.mountpoint.c_str(), nullptr)) {
    canonical = real;
    free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
  }

  std::vector<std::string> args = SessionArgs(config, mount);
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (auto& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  // INIT flags libfuse 3.14 leaves out of its reply. FUSE_PARALLEL_DIROPS:
  // without it the kernel lets one LOOKUP per directory reach the daemon at
  // a time (libfuse wants it but never sends it). FUSE_DIRECT_IO_ALLOW_MMAP:
  // shared mmap of direct-I/O handles, write handles included, which answer
  // the READs of its page faults from the writer's state. Without the flag
  // such a mapping fails with ENODEV.
  // FUSE_PASSTHROUGH: fully cached files read by the kernel from the data
  // cache (passthrough.h), when there is one and --no-passthrough is not set.
  const FsConfig& fc = fs.config();
  const bool passthrough = fc.passthrough && fc.data_cache && !fc.cache_dir.empty() && fc.prefetch;
  InitFlagsIo init_io(kFuseParallelDirops | kFuseDirectIoAllowMmap |
                      (passthrough ? kFusePassthrough : 0));
  if (handover != nullptr && handover->record_init) init_io.OnInitRequest(handover->record_init);
  if (takeover) init_io.ReplayInit(handover->takeover_init);
  SessionData session{&fs, &init_io, observer};
  std::unique_ptr<PassthroughTable> passthrough_table;
  const fuse_lowlevel_ops& ops = FuseOperations();
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof(ops), &session);
  fuse_opt_free_args(&fargs);
  if (se == nullptr) {
    Status s = MakeError(EINVAL, "FuseOptions", "libfuse refused the mount options (see above)");
    spdlog::error("{}", s.error().message);
    report(s);
    return 1;
  }
  const fuse_custom_io custom_io = InitFlagsCustomIo();
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_session_destroy(se);
    report(MakeError(EIO, "Signals", "could not install signal handlers"));
    return 1;
  }
  if (takeover) {
    if (int err = fuse_session_custom_io(se, &custom_io, handover->takeover_fd); err != 0) {
      Status s =
          MakeError(-err, "Takeover",
                    std::string("cannot serve the handed-over FUSE descriptor: ") + strerror(-err));
      spdlog::error("{}", s.error().message);
      fuse_remove_signal_handlers(se);
      fuse_session_destroy(se);
      report(s);
      return 1;
    }
  } else if (fuse_session_mount(se, mount.mountpoint.c_str()) != 0) {
    Status s = MakeError(EIO, "Mount",
                         "could not mount at " + mount.mountpoint +
                             " (is /dev/fuse available? see the message above)");
    spdlog::error("{}", s.error().message);
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    report(s);
    return 1;
  }
  // The same descriptor, read and written through InitFlagsIo from now on.
  if (!takeover && session.init_io != nullptr) {
    if (int err = fuse_session_custom_io(se, &custom_io, fuse_session_fd(se)); err != 0) {
      session.init_io = nullptr;
      spdlog::warn(
          "custom /dev/fuse I/O failed ({}): lookups in one directory run one at a time and "
          "shared mmap of direct-I/O files stays refused",
          strerror(-err));
    }
  }
  if (passthrough && session.init_io != nullptr) {
    passthrough_table = std::make_unique<PassthroughTable>(DeviceBackingOps(fuse_session_fd(se)));
    session.passthrough = passthrough_table.get();
  }
  // Before the loop answers INIT (see mount_readahead.h).
  if (Status s = takeover ? Status::Ok() : SetMountReadahead(canonical, kMaxReadahead); !s.ok()) {
    spdlog::debug("kernel readahead left at its default: {}", s.error().message);
  }
  if (handover != nullptr && handover->keep_fd) handover->keep_fd(fuse_session_fd(se));
  spdlog::info("{} s3://{}/{} at {}", takeover ? "took over the mount of" : "mounted",
               config.bucket, config.prefix, mount.mountpoint);
  report(Status::Ok());
  DelayLoopStartForTests();

  fuse_loop_config* loop = fuse_loop_cfg_create();
  // Cloned descriptors die with this process, and the kernel fails what was
  // read through them: a session that may be handed over reads the one it keeps.
  fuse_loop_cfg_set_clone_fd(loop, handover == nullptr ? 1 : 0);
  const int threads = std::max(1, mount.max_threads);
  fuse_loop_cfg_set_max_threads(loop, static_cast<unsigned>(threads));
  fuse_loop_cfg_set_idle_threads(loop, static_cast<unsigned>(threads));
  const int loop_result = fuse_session_loop_mt(se, loop);
  fuse_loop_cfg_destroy(loop);

  // Signalled or unmounted (the service manager hears "stopping" here,
  // before uploads finish or the mount is handed over).
  if (events.on_loop_ended) events.on_loop_ended(loop_result > 0 ? loop_result : 0);
  // Unmounted from outside: nothing to hand over. Signalled: a successor may
  // take the mount over, or this daemon finishes what applications wrote and
  // unmounts.
  const bool unmounted = fuse_session_exited(se) && loop_result == 0;
  if (!unmounted && handover != nullptr && handover->hand_over_at_exit &&
      handover->hand_over_at_exit()) {
    Status prepared = fs.PrepareHandover();
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);  // closes this process's descriptor, not the kept one
    spdlog::info("left {} mounted for the next bucketfs", mount.mountpoint);
    return prepared.ok() ? 0 : 1;
  }
  Status shutdown = fs.Shutdown();
  fuse_remove_signal_handlers(se);
  if (takeover) {
    DetachTakenOverMount(mount.mountpoint);
  } else {
    fuse_session_unmount(se);
  }
  fuse_session_destroy(se);
  spdlog::info("unmounted {}", mount.mountpoint);
  if (!shutdown.ok()) return 1;
  return loop_result < 0 ? 1 : 0;  // > 0: the signal that ended the loop
}

}  // namespace bucketfs::fs
