// bucketfs sync PATH...: waits until every file closed on the bucketfs mount
// holding PATH is in S3, and fails with the first upload error not yet
// reported. syncfs(2) (`sync -f`) cannot do this: the kernel does not pass it
// to a FUSE daemon, so this asks with fsync(2) of a directory, which it does.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "mount-tools/commands.h"

namespace bucketfs::tools {

int RunSyncCommand(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    std::fprintf(argc < 2 ? stderr : stdout,
                 "usage: bucketfs sync PATH...\n"
                 "Waits until the files closed on the mounts holding PATH are uploaded (mounts\n"
                 "with --async-close); exits 1 with the first upload error not yet reported.\n");
    return argc < 2 ? 2 : 0;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    // A directory: fsync of it is what reaches the daemon (FSYNCDIR).
    const int fd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      std::fprintf(stderr, "bucketfs sync: %s: %s\n", argv[i], std::strerror(errno));
      status = 1;
      continue;
    }
    if (fsync(fd) != 0) {
      std::fprintf(stderr, "bucketfs sync: %s: an upload failed: %s (the mount's log names it)\n",
                   argv[i], std::strerror(errno));
      status = 1;
    }
    close(fd);
  }
  return status;
}

}  // namespace bucketfs::tools
