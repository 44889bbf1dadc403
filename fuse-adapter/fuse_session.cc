// RunFuseSession: mount, serve on libfuse's multithreaded loop, finish
// uploads, unmount (see fuse_session.h).
#include "fuse-adapter/fuse_session.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "fuse-adapter/fuse_adapter.h"
#include "fuse-adapter/init_flags_io.h"
#include "fuse-adapter/mount_readahead.h"
#include "fuse/filesystem.h"

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
  if (mount.debug) args.push_back("-d");
  for (const auto& o : opts) {
    args.push_back("-o");
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

}  // namespace

int RunFuseSession(Filesystem& fs, const FuseMountOptions& mount,
                   std::function<void(Status)> on_mount_result, FuseObserver* observer) {
  const FsConfig& config = fs.config();
  auto report = [&](Status s) {
    if (on_mount_result) on_mount_result(std::move(s));
    on_mount_result = nullptr;
  };
  if (Status s = CheckMountpoint(mount.mountpoint); !s.ok()) {
    spdlog::error("{}", s.error().message);
    report(s);
    return 1;
  }

  // Canonical now: after the mount, resolving it would wait on our own root.
  std::string canonical = mount.mountpoint;
  if (char* real = realpath(mount.mountpoint.c_str(), nullptr)) {
    canonical = real;
    free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
  }

  std::vector<std::string> args = SessionArgs(config, mount);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  // INIT flags libfuse 3.14 leaves out of its reply. FUSE_PARALLEL_DIROPS:
  // without it the kernel lets one LOOKUP per directory reach the daemon at
  // a time (libfuse wants it but never sends it). Shared mmap of direct-I/O
  // files on read-only mounts only: the kernel then allows it on every
  // direct-I/O handle, write handles included, and a shared mapping of a
  // write handle would fault its pages in with READs that handle cannot
  // serve (SIGBUS). Without the flag such a mapping fails with ENODEV.
  InitFlagsIo init_io(kFuseParallelDirops | (config.read_only ? kFuseDirectIoAllowMmap : 0));
  SessionData session{&fs, &init_io, observer};
  const fuse_lowlevel_ops& ops = FuseOperations();
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof(ops), &session);
  fuse_opt_free_args(&fargs);
  if (se == nullptr) {
    Status s = MakeError(EINVAL, "FuseOptions", "libfuse refused the mount options (see above)");
    spdlog::error("{}", s.error().message);
    report(s);
    return 1;
  }
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_session_destroy(se);
    report(MakeError(EIO, "Signals", "could not install signal handlers"));
    return 1;
  }
  if (fuse_session_mount(se, mount.mountpoint.c_str()) != 0) {
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
  const fuse_custom_io custom_io = InitFlagsCustomIo();
  if (session.init_io != nullptr) {
    if (int err = fuse_session_custom_io(se, &custom_io, fuse_session_fd(se)); err != 0) {
      session.init_io = nullptr;
      spdlog::warn(
          "custom /dev/fuse I/O failed ({}): lookups in one directory run one at a time and "
          "shared mmap of direct-I/O files stays refused",
          strerror(-err));
    }
  }
  // Before the loop answers INIT (see mount_readahead.h).
  if (Status s = SetMountReadahead(canonical, kMaxReadahead); !s.ok()) {
    spdlog::debug("kernel readahead left at its default: {}", s.error().message);
  }
  spdlog::info("mounted s3://{}/{} at {}", config.bucket, config.prefix, mount.mountpoint);
  report(Status::Ok());

  fuse_loop_config* loop = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(loop, 1);
  const int threads = std::max(1, mount.max_threads);
  fuse_loop_cfg_set_max_threads(loop, static_cast<unsigned>(threads));
  fuse_loop_cfg_set_idle_threads(loop, static_cast<unsigned>(threads));
  const int loop_result = fuse_session_loop_mt(se, loop);
  fuse_loop_cfg_destroy(loop);

  // Signalled or unmounted: finish what applications wrote, then unmount.
  Status shutdown = fs.Shutdown();
  fuse_remove_signal_handlers(se);
  fuse_session_unmount(se);
  fuse_session_destroy(se);
  spdlog::info("unmounted {}", mount.mountpoint);
  if (!shutdown.ok()) return 1;
  return loop_result < 0 ? 1 : 0;  // > 0: the signal that ended the loop
}

}  // namespace bucketfs::fs
