// `bucketfs SOURCE MOUNTPOINT [options]`: the composition root of a mount.
//
// Order matters: parse (exit 2 on a usage error) -> check the mountpoint, read
// the --env-file, resolve the client configuration and bind --metrics-addr
// (exit 1, nothing started yet) -> detach (fork while single-threaded) -> in
// the serving process: logging, the S3 client, the bucket check, the
// components (mount_wiring.h), the metrics endpoint and the control socket,
// then RunFuseSession, whose mount result travels back to the waiting parent
// and, with -f under systemd, to the ServiceNotifier (READY=1 once the mount
// answers, STOPPING=1 when the loop ends). With -f every step runs in this
// process.
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuse-adapter/fuse_session.h"
#include "metrics/registry.h"
#include "mount-tools/commands.h"
#include "mount-tools/control_paths.h"
#include "mount-tools/control_socket.h"
#include "mount-tools/daemonize.h"
#include "mount-tools/env_file.h"
#include "mount-tools/logging.h"
#include "mount-tools/memory_limit.h"
#include "mount-tools/metrics_http_server.h"
#include "mount-tools/mount_checks.h"
#include "mount-tools/mount_handover.h"
#include "mount-tools/mount_metrics.h"
#include "mount-tools/mount_options.h"
#include "mount-tools/mount_upgrade.h"
#include "mount-tools/mount_wiring.h"
#include "mount-tools/order_command.h"
#include "mount-tools/service_notifier.h"
#include "mount-tools/status_snapshot.h"
#include "mount-tools/systemd_fd_store.h"
#include "mount-tools/systemd_notify.h"
#include "mount-tools/upload_cleanup.h"
#include "s3/client_config.h"
#include "s3/credentials.h"
#include "s3/object_client.h"

namespace bucketfs::tools {
namespace {

using ReportFn = std::function<void(const Status&)>;

std::string Describe(const MountOptions& o) { return o.source + " at " + o.fuse.mountpoint; }

// curl allocates and frees a 512 KiB receive buffer per ranged GET; with
// glibc's dynamic thresholds such blocks go back to the kernel and are
// faulted in again on the next transfer, so blocks below 4 MiB come from the
// heap and up to 64 MiB of free heap top stays mapped. Part buffers are
// mapped on their own (memory/buffer.h) and are not affected.
void TuneAllocatorForStreaming() {
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

// The read-ahead budget: --max-memory, else a quarter of the memory this
// process may use (its cgroup's limit when lower than RAM); logged either way.
void SetReadBudget(fs::FsConfig& config) {
  if (!config.prefetch) return;
  if (config.max_memory != 0) {
    spdlog::info("read-ahead memory budget {} (--max-memory)", ShowMemory(config.max_memory));
    return;
  }
  const DefaultReadBudget budget =
      ChooseDefaultReadBudget(AvailableMemoryFor(PhysicalMemoryBytes()));
  // Two read parts at least: one being served, one in flight.
  config.max_memory = std::max(budget.bytes, 2 * config.read_part_size);
  spdlog::info("{}", budget.explanation);
}

// The control socket of this mount (`bucketfs status`, `bucketfs upgrade`); none, with a warning,
// when it cannot be made: the mount works without it.
std::unique_ptr<ControlServer> StartControlSocket(const MountOptions& options,
                                                  const metrics::Registry& registry,
                                                  MountUpgrade& upgrade,
                                                  fs::Filesystem& filesystem) {
  const std::string dir = ControlSocketDir();
  if (Status s = MakeControlSocketDir(dir); !s.ok()) {
    spdlog::warn("no control socket (bucketfs status will not see this mount): {}",
                 s.error().message);
    return nullptr;
  }
  auto server = ControlServer::Listen(ControlSocketPath(dir, options.fuse.mountpoint));
  if (!server.ok()) {
    spdlog::warn("no control socket (bucketfs status will not see this mount): {}",
                 server.error().message);
    return nullptr;
  }
  MountIdentity id{options.fuse.mountpoint, options.source, static_cast<long>(::getpid()),
                   std::chrono::steady_clock::now()};
  (*server)->Register(
      "status", [&registry, id](const ControlRequest&, int) -> Result<ControlAnswer> {
        return ControlAnswer(StatusSnapshotText(registry, id, std::chrono::steady_clock::now()));
      });
  (*server)->Register("handover", [&upgrade](const ControlRequest& r, int stop_fd) {
    return upgrade.Handle(r, stop_fd);
  });
  (*server)->Register("order", [&filesystem](const ControlRequest& r, int) {
    return HandleOrderCommand(filesystem, r);
  });
  (*server)->Start();
  spdlog::info("control socket {}", (*server)->path());
  return std::move(*server);
}

// Everything after detaching: returns the process exit code; `report` is
// called exactly once with the mount outcome. `metrics_server` (may be
// null) is bound already and served from here until unmount. `passed`: the
// descriptors of a live mount to take over (from a service manager or
// `bucketfs upgrade`); `start_cwd`: where the command started, for a successor.
int Serve(const MountOptions& options, const s3::ClientConfig& client_config, const s3::EnvMap& env,
          MetricsHttpServer* metrics_server, const ReportFn& report,
          std::map<std::string, int> passed, const std::string& start_cwd) {
  TuneAllocatorForStreaming();
  // Declared first: the series read the components built below, so it goes last.
  metrics::Registry registry;
  spdlog::info("bucketfs 0.1.0: mounting {} (endpoint {}, region {}{})", Describe(options),
               client_config.endpoint_url.empty() ? "AWS" : client_config.endpoint_url,
               client_config.region, options.fs.read_only ? ", read-only" : "");
  if (!client_config.verify_tls) {
    spdlog::warn(
        "TLS certificate verification is off (--no-verify-ssl): anyone on the network path can "
        "read and change what this mount sends and receives");
  }
  auto made = s3::MakeS3Client(client_config, env, MakeS3Metrics(registry));
  if (!made.ok()) {
    Error e = made.error();
    e.message = "cannot set up the S3 client: " + e.message;
    spdlog::error("{}", e.message);
    report(e);
    return 1;
  }
  std::shared_ptr<s3::ObjectClient> client(std::move(*made));
  if (Status checked = CheckBucketAccess(*client, options.fs); !checked.ok()) {
    spdlog::error("{}", checked.error().message);
    report(checked);
    return 1;
  }
  if (!options.fs.bucket.empty() && !options.fs.read_only) {
    WarnAboutLeftoverUploads(*client, options.fs.bucket, options.fs.prefix);
  }
  fs::FsConfig fs_config = options.fs;
  // Metadata cache records are keyed by server: the endpoint, or AWS's region.
  fs_config.cache_scope = client_config.endpoint_url.empty() ? "aws:" + client_config.region
                                                             : client_config.endpoint_url;
  SetReadBudget(fs_config);
  auto set_up = SetUpMountHandover(std::move(passed));
  if (!set_up.ok()) {
    Error e = set_up.error();
    e.message = "cannot take over the mount at " + options.fuse.mountpoint + ": " + e.message;
    spdlog::error("{}", e.message);
    report(e);
    return 1;
  }
  std::unique_ptr<MountHandover> handover = std::move(*set_up);
  MountUpgrade upgrade(*handover, start_cwd);
  std::unique_ptr<fs::Filesystem> filesystem =
      BuildFilesystem(std::move(client), fs_config, handover->journal, &registry);
  if (handover->takeover) filesystem->Restore(handover->restored);
  std::unique_ptr<fs::FuseObserver> fuse_metrics = MakeFuseMetrics(registry);
  if (metrics_server != nullptr) {
    metrics_server->Start([&registry] { return registry.RenderText(); });
    spdlog::info("metrics at http://{}:{}/metrics", options.metrics_addr->host,
                 metrics_server->port());
  }
  std::unique_ptr<ControlServer> control =
      StartControlSocket(options, registry, upgrade, *filesystem);
  // Declared after the filesystem: its thread reads the counters until Stop.
  const SystemdNotifier systemd =
      options.fuse.foreground ? SystemdNotifier() : SystemdNotifier::Disabled();
  ServiceNotifier notifier(systemd,
                           {.mountpoint = options.fuse.mountpoint, .source = options.source},
                           [&filesystem] { return filesystem->io_counters().Snapshot(); });
  bool mounted = false;
  fs::FuseSessionEvents events;
  events.on_mount_result = [&](Status result) {
    if (result.ok()) {
      mounted = true;
      report(result);
      notifier.MountReported();
      return;
    }
    Error e = result.error();
    e.message = "cannot mount " + Describe(options) + ": " + e.message;
    spdlog::error("{}", e.message);
    report(e);
  };
  // Where SIGTERM (or an unmount from outside) arrives, before uploads
  // finish or the mount is handed over.
  events.on_loop_ended = [&](int signal) { notifier.Stopping(signal); };
  int code = fs::RunFuseSession(*filesystem, options.fuse, std::move(events), &handover->session,
                                fuse_metrics.get());
  upgrade.SessionEnded();
  notifier.Stop();
  // Before what they read goes away.
  control.reset();
  if (metrics_server != nullptr) metrics_server->Stop();
  if (!handover->flags->handed_over) ForgetStoredMount();
  if (!mounted && code == 0) code = 1;
  spdlog::log(code == 0 ? spdlog::level::info : spdlog::level::warn,
              "bucketfs exits with status {}", code);
  FlushLogging();
  return code;
}

}  // namespace

int RunMountCommand(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto parsed = ParseMountCommand(args, MountDefaults{.uid = ::getuid(), .gid = ::getgid()});
  if (!parsed.ok()) {
    std::fprintf(stderr, "bucketfs: %s\nTry 'bucketfs --help' for the options.\n",
                 parsed.error().message.c_str());
    return 2;
  }
  if (parsed->help) {
    std::fputs(MountUsage().c_str(), stdout);
    return 0;
  }
  MountOptions options = std::move(parsed->options);
  MakePathsAbsolute(options);
  std::string start_cwd = "/";
  if (char* cwd = ::getcwd(nullptr, 0)) {
    start_cwd = cwd;
    free(cwd);  // NOLINT(cppcoreguidelines-no-malloc): getcwd's buffer
  }
  // A restarted service gets its live mount back from the service manager,
  // an upgrade from the daemon it replaces (mount_handover.h); that
  // mountpoint is busy by design, and only this process can answer a look at it.
  auto upgrade_fds = TakeUpgradeFds();
  if (!upgrade_fds.ok()) {
    std::fprintf(stderr, "bucketfs: %s\n", upgrade_fds.error().message.c_str());
    return 1;
  }
  std::map<std::string, int> passed = std::move(*upgrade_fds);
  if (options.fuse.foreground && passed.empty()) passed = TakePassedFds();
  Status checked = HasMountToTakeOver(passed)
                       ? Status::Ok()
                       : CheckMountpoint(options.fuse.mountpoint, options.allow_nonempty);
  // A service's previous daemon died and the manager kept nothing to take
  // over (a stop in between): its dead mount is in the way of the restart.
  if (!checked.ok() && checked.error().errno_value == ENOTCONN && UnderServiceManager() &&
      geteuid() == 0 && umount2(options.fuse.mountpoint.c_str(), MNT_DETACH) == 0) {
    std::fprintf(stderr, "bucketfs: detached the dead mount of a previous daemon at %s\n",
                 options.fuse.mountpoint.c_str());
    checked = CheckMountpoint(options.fuse.mountpoint, options.allow_nonempty);
  }
  if (Status s = checked; !s.ok()) {
    std::fprintf(stderr, "bucketfs: %s\n", s.error().message.c_str());
    return 1;
  }
  s3::EnvMap env = s3::CurrentEnvironment();
  if (!options.env_file.empty()) {
    auto file = LoadEnvFile(options.env_file, ::geteuid());
    if (!file.ok()) {
      std::fprintf(stderr, "bucketfs: %s\n", file.error().message.c_str());
      return 1;
    }
    for (const std::string& w : file->warnings)
      std::fprintf(stderr, "bucketfs: warning: %s\n", w.c_str());
    MergeEnvFile(*file, env);
  }
  auto client_config = s3::ResolveClientConfig(options.client, env);
  if (!client_config.ok()) {
    std::fprintf(stderr, "bucketfs: %s\n", client_config.error().message.c_str());
    return 1;
  }

  // Bound before detaching, so a bad or busy address fails here, on the terminal.
  std::unique_ptr<MetricsHttpServer> metrics_server;
  if (options.metrics_addr) {
    auto bound = MetricsHttpServer::Bind(*options.metrics_addr);
    if (!bound.ok()) {
      std::fprintf(stderr, "bucketfs: %s\n", bound.error().message.c_str());
      return 1;
    }
    metrics_server = std::move(*bound);
  }

  if (options.fuse.foreground) {
    if (Status s = SetUpLogging(options.log, ChooseLogDestination(options.log, false), false);
        !s.ok()) {
      std::fprintf(stderr, "bucketfs: %s\n", s.error().message.c_str());
      return 1;
    }
    return Serve(
        options, *client_config, env, metrics_server.get(),
        [](const Status& s) {
          if (!s.ok()) std::fprintf(stderr, "bucketfs: %s\n", s.error().message.c_str());
        },
        std::move(passed), start_cwd);
  }

  // Nothing above started a thread: fork now (see daemonize.h).
  return RunDetached([&](MountResultReporter& reporter) {
    LogDestination dest = ChooseLogDestination(options.log, true);
    if (Status s = SetUpLogging(options.log, dest, /*redirect_stderr=*/true); !s.ok()) {
      reporter.Report(s);
      return 1;
    }
    if (dest == LogDestination::kFile) reporter.KeepStderr();
    return Serve(
        options, *client_config, env, metrics_server.get(),
        [&reporter](const Status& s) { reporter.Report(s); }, std::move(passed), start_cwd);
  });
}

}  // namespace bucketfs::tools
