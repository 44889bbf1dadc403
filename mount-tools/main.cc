// bucketfs: mount a bucket (`bucketfs s3://BUCKET[/PREFIX] MOUNTPOINT`) or use
// a subcommand (`bucketfs s3 ...`). Dispatch only; see commands.h.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "mount-tools/commands.h"

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: bucketfs s3://BUCKET[/PREFIX] MOUNTPOINT [options]   mount a bucket\n"
               "       bucketfs s3 ls|get|put|rm|bench ...                 direct S3 client\n"
               "       bucketfs warm PATH [--threads N]                     walk a mounted tree "
               "into the cache\n"
               "       bucketfs cleanup s3://BUCKET[/PREFIX] [--older-than S] [--dry-run]\n"
               "       bucketfs sync DIR...                                 wait for a mount's "
               "background uploads\n"
               "       bucketfs status [--once] [MOUNTPOINT]                live view of mounts "
               "(throughput, requests, errors)\n"
               "       bucketfs upgrade MOUNTPOINT                          replace a mount's "
               "daemon without unmounting\n"
               "       bucketfs --help | --version\n"
               "Run a subcommand with --help for its options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    PrintUsage(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("bucketfs 0.1.0\n");
    return 0;
  }
  if (first == "s3") return bucketfs::tools::RunS3Command(argc - 1, argv + 1);
  if (first == "warm") return bucketfs::tools::RunWarmCommand(argc - 1, argv + 1);
  if (first == "cleanup") return bucketfs::tools::RunCleanupCommand(argc - 1, argv + 1);
  if (first == "sync") return bucketfs::tools::RunSyncCommand(argc - 1, argv + 1);
  if (first == "status") return bucketfs::tools::RunStatusCommand(argc - 1, argv + 1);
  if (first == "upgrade") return bucketfs::tools::RunUpgradeCommand(argc - 1, argv + 1);
  // Everything else is a mount: `bucketfs SOURCE MOUNTPOINT [options]`, also
  // the form mount(8) uses for fstab entries through the mount helper.
  return bucketfs::tools::RunMountCommand(argc, argv);
}
