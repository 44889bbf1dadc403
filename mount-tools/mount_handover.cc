#include "mount-tools/mount_handover.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "mount-tools/systemd_fd_store.h"

namespace bucketfs::tools {

bool HasMountToTakeOver(const std::map<std::string, int>& passed) {
  return passed.contains(kFuseFdName) && passed.contains(kJournalFdName);
}

Result<std::unique_ptr<MountHandover>> SetUpMountHandover(std::map<std::string, int> passed) {
  auto h = std::make_unique<MountHandover>();
  if (HasMountToTakeOver(passed)) {
    const int fuse_fd = passed.at(kFuseFdName);
    auto journal = handover::SessionJournal::Adopt(passed.at(kJournalFdName), &h->restored);
    passed.erase(kJournalFdName);
    passed.erase(kFuseFdName);
    for (auto& [name, fd] : passed) close(fd);
    if (!journal.ok()) {
      close(fuse_fd);
      return journal.error();
    }
    if (h->restored.init_request.empty()) {
      close(fuse_fd);
      return MakeError(EINVAL, "Takeover",
                       "the previous daemon's journal has no INIT request: it never served the "
                       "mount; unmount it (umount -l) and start again");
    }
    h->journal = std::move(*journal);
    h->takeover = true;
    h->session.takeover_fd = fuse_fd;
    h->session.takeover_init = h->restored.init_request;
  } else {
    for (auto& [name, fd] : passed) close(fd);
    auto journal = handover::SessionJournal::Create();
    if (!journal.ok()) return journal.error();
    h->journal = std::move(*journal);
    if (Status s = StoreFd(h->journal->fd(), kJournalFdName); !s.ok()) {
      spdlog::warn("{}: a restart of this daemon will unmount", s.error().message);
    }
    handover::SessionJournal* journal_ptr = h->journal.get();
    h->session.record_init = [journal_ptr](std::span<const std::byte> request) {
      journal_ptr->RecordInit(request);
    };
  }
  std::shared_ptr<MountHandover::Flags> flags = h->flags;
  const bool takeover = h->takeover;
  h->session.keep_fd = [flags, takeover](int fd) {
    // The session closes its own descriptor when it ends; this copy keeps
    // the kernel's connection for a successor.
    flags->kept_fuse_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    // A taken-over descriptor is in the store already (when there is one).
    if (takeover) return;
    if (Status s = StoreFd(fd, kFuseFdName); !s.ok()) {
      spdlog::warn("{}: a restart of this daemon will unmount", s.error().message);
    }
  };
  handover::SessionJournal* journal_ptr = h->journal.get();
  h->session.hand_over_at_exit = [flags, journal_ptr] {
    if (!flags->upgrade_requested && !RestartIsPending()) return false;
    if (!journal_ptr->healthy()) {
      spdlog::warn("the session journal is incomplete: unmounting instead of handing over");
      return false;
    }
    flags->handed_over = true;
    return true;
  };
  return h;
}

void ForgetStoredMount() {
  RemoveStoredFds(kFuseFdName);
  RemoveStoredFds(kJournalFdName);
}

}  // namespace bucketfs::tools
