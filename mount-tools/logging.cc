#include "mount-tools/logging.h"

#include <fcntl.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace bucketfs::tools {

LogDestination ChooseLogDestination(const LogSettings& settings, bool detached) {
  if (!settings.file.empty()) return LogDestination::kFile;
  return detached ? LogDestination::kDiscard : LogDestination::kStderr;
}

Status SetUpLogging(const LogSettings& settings, LogDestination destination, bool redirect_stderr) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  switch (destination) {
    case LogDestination::kStderr:
      sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
      break;
    case LogDestination::kDiscard:
      sink = std::make_shared<spdlog::sinks::null_sink_mt>();
      break;
    case LogDestination::kFile: {
      if (settings.file.empty()) return MakeError(EINVAL, "Usage", "no log file given");
      // Create it private first: a log may name buckets and keys.
      int fd = ::open(settings.file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) {
        int err = errno;
        return MakeError(err, "LogFile",
                         "cannot open log file '" + settings.file + "': " + std::strerror(err));
      }
      if (redirect_stderr && ::dup2(fd, STDERR_FILENO) < 0) {
        int err = errno;
        ::close(fd);
        return MakeError(err, "LogFile",
                         std::string("cannot redirect stderr: ") + std::strerror(err));
      }
      ::close(fd);
      try {
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(settings.file, false);
      } catch (const spdlog::spdlog_ex& e) {
        return MakeError(EIO, "LogFile",
                         "cannot open log file '" + settings.file + "': " + e.what());
      }
      break;
    }
  }
  auto logger = std::make_shared<spdlog::logger>("bucketfs", std::move(sink));
  logger->set_level(settings.level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %L [%t] %v");
  // Warnings and errors reach the file even if the process dies right after.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  spdlog::flush_every(std::chrono::seconds(2));
  return Status::Ok();
}

void FlushLogging() {
  // Not spdlog::shutdown(): threads still running may log after this.
  if (auto logger = spdlog::default_logger()) logger->flush();
}

}  // namespace bucketfs::tools
