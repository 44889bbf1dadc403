// Scheduling of the calling thread, for work that must never take CPU time
// from the work an application waits for.
#pragma once

namespace bucketfs::base {

// Gives the calling thread (not its process) the lowest priority, nice 19:
// under contention it gets about 1/70 of a CPU beside one thread of default
// priority, and all the CPU time nothing else wants. False when refused.
bool LowerThisThreadsPriority();

}  // namespace bucketfs::base
