// LowerThisThreadsPriority: see thread_priority.h.
#include "base/thread_priority.h"

#include <sys/resource.h>
#include <unistd.h>

namespace bucketfs::base {

bool LowerThisThreadsPriority() {
  // On Linux a nice value belongs to a thread, named by its thread id.
  return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19) == 0;
}

}  // namespace bucketfs::base
