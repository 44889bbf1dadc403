// Placeholder until the direct client lands (issue 2).
#include <cstdio>

#include "mount-tools/commands.h"

namespace bucketfs::tools {
int RunS3Command(int /*argc*/, char** /*argv*/) {
  std::fprintf(stderr, "bucketfs s3: not implemented yet\n");
  return 2;
}
}  // namespace bucketfs::tools
