#include "mount-tools/mount_handover.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "mount-tools/systemd_fd_store.h"

namespace bucketfs::tools {

bool HasMountToTakeOver(const std::map<std::string, int>& passed) {
  return passed.contains(kFuseFdName) && passed.contains(kJournalFdName);
}

Result<std::unique_ptr<MountHandover>> SetUpMountHandover(std::map<std::string, int> passed) {
  if (!UnderServiceManager()) {
    for (auto& [name, fd] : passed) close(fd);
    return std::unique_ptr<MountHandover>();
  }
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
      return std::unique_ptr<MountHandover>();
    }
    handover::SessionJournal* journal_ptr = h->journal.get();
    h->session.record_init = [journal_ptr](std::span<const std::byte> request) {
      journal_ptr->RecordInit(request);
    };
    h->session.keep_fd = [](int fd) {
      if (Status s = StoreFd(fd, kFuseFdName); !s.ok()) {
        spdlog::warn("{}: a restart of this daemon will unmount", s.error().message);
      }
    };
  }
  std::weak_ptr<bool> handed_over = h->handed_over;
  handover::SessionJournal* journal_ptr = h->journal.get();
  h->session.hand_over_at_exit = [handed_over, journal_ptr] {
    if (!RestartIsPending()) return false;
    if (!journal_ptr->healthy()) {
      spdlog::warn("the session journal is incomplete: unmounting instead of handing over");
      return false;
    }
    if (auto flag = handed_over.lock()) *flag = true;
    return true;
  };
  return h;
}

void ForgetStoredMount() {
  RemoveStoredFds(kFuseFdName);
  RemoveStoredFds(kJournalFdName);
}

}  // namespace bucketfs::tools
