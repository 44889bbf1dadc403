// Placeholder until the mount lands (issue 4).
#include <cstdio>

#include "mount-tools/commands.h"

namespace bucketfs::tools {
int RunMountCommand(int /*argc*/, char** /*argv*/) {
  std::fprintf(stderr, "bucketfs: mounting is not implemented yet\n");
  return 2;
}
}  // namespace bucketfs::tools
