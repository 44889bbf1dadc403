// A second Filesystem takes over the inode numbers and handles the first one
// recorded in its session journal, as a restarted daemon does.
#include <gtest/gtest.h>

#include "fuse/testing/fs_test_util.h"
#include "handover/session_journal.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsHandoverTest : public FsTest {
 protected:
  // A filesystem recording into `journal`.
  std::unique_ptr<Filesystem> MountRecording(std::shared_ptr<handover::SessionJournal> journal) {
    FsConfig config;
    config.bucket = kBucket;
    config.allow_overwrite = true;
    return std::make_unique<Filesystem>(
        client_, config,
        FsComponents{MakeDirectReaderFactory(client_), MakeStagedWriterFactory(client_, config),
                     std::move(journal)});
  }
};

TEST_F(FsHandoverTest, SuccessorServesTheInodesAndHandlesOfThePredecessor) {
  client_->Put(kBucket, "dir/a", "contents of a");
  client_->Put(kBucket, "dir/b", "bb");
  auto journal = handover::SessionJournal::Create();
  ASSERT_TRUE(journal.ok());
  std::shared_ptr<handover::SessionJournal> first_journal(std::move(*journal));
  auto first = MountRecording(first_journal);
  auto dir = first->Lookup(kRootIno, "dir");
  ASSERT_TRUE(dir.ok());
  auto a = first->Lookup(dir->ino, "a");
  ASSERT_TRUE(a.ok());
  auto reading = first->Open(a->ino, O_RDONLY);
  ASSERT_TRUE(reading.ok());
  auto listing = first->OpenDir(dir->ino);
  ASSERT_TRUE(listing.ok());
  auto writing = first->Create(dir->ino, "new", O_WRONLY | O_CREAT);
  ASSERT_TRUE(writing.ok());
  ASSERT_TRUE(first->Write(writing->second.fh, 0, Bytes("unfinished")).ok());
  auto closed = first->Open(a->ino, O_RDONLY);
  ASSERT_TRUE(closed.ok());
  first->Release(closed->fh);
  ASSERT_TRUE(first->PrepareHandover().ok());
  EXPECT_FALSE(client_->Exists(kBucket, "dir/new")) << "no partial object";

  auto state = handover::SessionJournal::Read(first_journal->fd());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->handles.size(), 3u);  // the released one is gone
  Mount();
  fs_->Restore(*state);

  // The inode numbers mean what they meant.
  auto attr = fs_->GetAttr(a->ino);
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->st_size, 13);
  auto again = fs_->Lookup(dir->ino, "a");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ino, a->ino);
  // The read handle reads on.
  std::vector<std::byte> buf(64);
  auto n = fs_->Read(reading->fh, 3, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), *n), "tents of a");
  // The directory handle lists from the kernel's offset.
  size_t seen = 0;
  ASSERT_TRUE(fs_->ReadDir(dir->ino, listing->fh, 0, false,
                           [&](const std::string&, const struct stat&, const Entry*, off_t) {
                             ++seen;
                             return true;
                           })
                  .ok());
  EXPECT_EQ(seen, 4u);  // ".", "..", a, b
  // The handle that was writing fails, with a message that says why.
  auto w = fs_->Write(writing->second.fh, 10, Bytes("more"));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().errno_value, EIO);
  Status flushed = fs_->Flush(writing->second.fh);
  ASSERT_FALSE(flushed.ok());
  EXPECT_NE(flushed.error().message.find("restarted"), std::string::npos);
  fs_->Release(writing->second.fh);
  EXPECT_FALSE(client_->Exists(kBucket, "dir/new"));
  // New handles and inodes do not collide with the restored ones.
  auto fresh = fs_->Open(a->ino, O_RDONLY);
  ASSERT_TRUE(fresh.ok());
  EXPECT_GT(fresh->fh, writing->second.fh);
  auto b = fs_->Lookup(dir->ino, "b");
  ASSERT_TRUE(b.ok());
  EXPECT_GT(b->ino, writing->first.ino);
  fs_->Release(fresh->fh);
  fs_->Release(reading->fh);
}

TEST_F(FsHandoverTest, RestoredInodeIsErasedByTheKernelsForget) {
  client_->Put(kBucket, "f", "x");
  auto journal = handover::SessionJournal::Create();
  ASSERT_TRUE(journal.ok());
  std::shared_ptr<handover::SessionJournal> j(std::move(*journal));
  auto first = MountRecording(j);
  auto f = first->Lookup(kRootIno, "f");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(first->Lookup(kRootIno, "f").ok());  // the kernel's count is 2
  auto state = handover::SessionJournal::Read(j->fd());
  ASSERT_TRUE(state.ok());
  Mount();
  fs_->Restore(*state);
  EXPECT_EQ(fs_->inodes().size(), 2u);
  ASSERT_TRUE(fs_->Lookup(kRootIno, "f").ok());  // 3 for the kernel, 1 seen here
  fs_->Forget(f->ino, 3);
  EXPECT_EQ(fs_->inodes().size(), 1u);
  fs_->Forget(f->ino, 1);  // unknown after a restore: ignored, not fatal
}

}  // namespace
}  // namespace bucketfs::fs
