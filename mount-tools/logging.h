// Logging setup for the mount process: one spdlog default logger that every
// component logs through, writing to stderr (foreground), to --log-file, or
// nowhere (detached without a log file). Lines carry a timestamp, the level
// and the thread id. Nothing here ever formats credentials; components log
// errors through Error::ToString(), which never holds a secret.
#pragma once

#include <string>

#include "mount-tools/mount_options.h"
#include "s3/result.h"

namespace bucketfs::tools {

enum class LogDestination {
  kStderr,   // foreground without --log-file
  kFile,     // --log-file (required)
  kDiscard,  // detached without --log-file
};

// The destination implied by the settings and whether the process detaches.
LogDestination ChooseLogDestination(const LogSettings& settings, bool detached);

// Replaces spdlog's default logger. For kFile the file is opened for append
// (created 0600 when missing) and, when `redirect_stderr` is set, also
// becomes the process's stderr so that libfuse's and abort() messages land
// in it. Errors name the file and the reason.
Status SetUpLogging(const LogSettings& settings, LogDestination destination, bool redirect_stderr);

// Flushes the default logger (before exit).
void FlushLogging();

}  // namespace bucketfs::tools
