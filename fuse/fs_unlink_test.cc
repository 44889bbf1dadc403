// Unlink of open files: the name goes at once, the object at the last close.
#include <gtest/gtest.h>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsUnlinkTest : public FsTest {
 protected:
  void SetUp() override {
    FsConfig config;
    config.allow_delete = true;
    config.allow_overwrite = true;
    Mount(config);
  }
  std::string ReadFrom(uint64_t fh, size_t size) {
    std::vector<std::byte> buf(size);
    auto n = fs_->Read(fh, 0, buf);
    EXPECT_TRUE(n.ok()) << n.error().ToString();
    if (!n.ok()) return {};
    return std::string(reinterpret_cast<const char*>(buf.data()), *n);
  }
};

TEST_F(FsUnlinkTest, ReadsGoOnUntilTheLastCloseThenTheObjectGoes) {
  client_->Put(kBucket, "f", "content");
  auto f = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(f.ok());
  auto a = fs_->Open(f->ino, O_RDONLY);
  auto b = fs_->Open(f->ino, O_RDONLY);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "f").ok());
  // The name is gone at once, in lookups and in listings ...
  EXPECT_EQ(fs_->Lookup(kRootIno, "f").error().errno_value, ENOENT);
  EXPECT_EQ(Names(ListDir(kRootIno, false)), (std::vector<std::string>{".", ".."}));
  EXPECT_EQ(fs_->Unlink(kRootIno, "f").error().errno_value, ENOENT);
  // ... the object is not, while handles read it.
  EXPECT_TRUE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(ReadFrom(a->fh, 100), "content");
  fs_->Release(a->fh);
  EXPECT_TRUE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(ReadFrom(b->fh, 100), "content");
  fs_->Release(b->fh);
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(fs_->Lookup(kRootIno, "f").error().errno_value, ENOENT);
}

TEST_F(FsUnlinkTest, ARenameKeepsTheSourceForItsReadersUntilTheLastClose) {
  client_->Put(kBucket, "f", "content");
  auto f = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(f.ok());
  auto a = fs_->Open(f->ino, O_RDONLY);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(fs_->Rename(kRootIno, "f", kRootIno, "g", 0).ok());
  EXPECT_EQ(fs_->Lookup(kRootIno, "f").error().errno_value, ENOENT);
  EXPECT_EQ(Names(ListDir(kRootIno, false)), (std::vector<std::string>{".", "..", "g"}));
  EXPECT_EQ(client_->Data(kBucket, "g"), "content");
  EXPECT_EQ(ReadFrom(a->fh, 100), "content");
  fs_->Release(a->fh);
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(client_->Data(kBucket, "g"), "content");
}

TEST_F(FsUnlinkTest, ANewFileUnderTheNameSurvivesTheOldHandlesClose) {
  client_->Put(kBucket, "f", "old");
  auto f = fs_->Lookup(kRootIno, "f");
  auto old = fs_->Open(f->ino, O_RDONLY);
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "f").ok());
  EXPECT_EQ(ReadFrom(old->fh, 100), "old");
  WriteAndClose(kRootIno, "f", "new");
  auto now = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->attr.st_size, 3);
  fs_->Release(old->fh);
  ASSERT_TRUE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(client_->Data(kBucket, "f"), "new");
}

TEST_F(FsUnlinkTest, AnObjectAnotherClientWroteMeanwhileIsKept) {
  client_->Put(kBucket, "f", "old");
  auto f = fs_->Lookup(kRootIno, "f");
  auto old = fs_->Open(f->ino, O_RDONLY);
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "f").ok());
  client_->Put(kBucket, "f", "theirs");
  fs_->Release(old->fh);
  ASSERT_TRUE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(client_->Data(kBucket, "f"), "theirs");
}

TEST_F(FsUnlinkTest, AFileUnlinkedWhileWrittenIsNeverUploaded) {
  auto c = fs_->Create(kRootIno, "w", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("partial")).ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "w").ok());
  EXPECT_EQ(fs_->Lookup(kRootIno, "w").error().errno_value, ENOENT);
  EXPECT_EQ(Names(ListDir(kRootIno, false)), (std::vector<std::string>{".", ".."}));
  // Writes and close still succeed, as on a local file system; nothing appears.
  ASSERT_TRUE(fs_->Write(c->second.fh, 7, Bytes(" more")).ok());
  EXPECT_TRUE(fs_->Flush(c->second.fh).ok());
  EXPECT_TRUE(fs_->Fsync(c->second.fh).ok());
  fs_->Release(c->second.fh);
  EXPECT_FALSE(client_->Exists(kBucket, "w"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
  EXPECT_EQ(client_->Calls("PutObject"), 0);
  // The name is free for a new file.
  WriteAndClose(kRootIno, "w", "again");
  EXPECT_EQ(client_->Data(kBucket, "w"), "again");
}

TEST_F(FsUnlinkTest, UnlinkOfAnObjectBeingReplacedRemovesTheOldOneNow) {
  client_->Put(kBucket, "r", "old");
  auto r = fs_->Lookup(kRootIno, "r");
  auto w = fs_->Open(r->ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  ASSERT_TRUE(fs_->Write(w->fh, 0, Bytes("new")).ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "r").ok());
  EXPECT_FALSE(client_->Exists(kBucket, "r"));  // the old version: no handle reads it
  fs_->Release(w->fh);
  EXPECT_FALSE(client_->Exists(kBucket, "r"));
}

TEST_F(FsUnlinkTest, WithoutOpenHandlesUnlinkDeletesAtOnce) {
  client_->Put(kBucket, "f", "x");
  ASSERT_TRUE(fs_->Lookup(kRootIno, "f").ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "f").ok());
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(client_->Calls("DeleteObject"), 1);
}

}  // namespace
}  // namespace bucketfs::fs
