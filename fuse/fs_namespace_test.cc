// mkdir, rmdir, unlink and rename through the filesystem core.
#include <gtest/gtest.h>
#include <linux/fs.h>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsNamespaceTest : public FsTest {};

TEST_F(FsNamespaceTest, UnlinkNeedsAllowDelete) {
  client_->Put(kBucket, "f", "x");
  Mount();
  ASSERT_TRUE(fs_->Lookup(kRootIno, "f").ok());
  EXPECT_EQ(fs_->Unlink(kRootIno, "f").error().errno_value, EPERM);
  EXPECT_TRUE(client_->Exists(kBucket, "f"));
  FsConfig config;
  config.allow_delete = true;
  Mount(config);
  ASSERT_TRUE(fs_->Lookup(kRootIno, "f").ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "f").ok());
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(fs_->Lookup(kRootIno, "f").error().errno_value, ENOENT);
}

TEST_F(FsNamespaceTest, MkdirIsLocalUntilWrittenThenRmdir) {
  Mount();
  auto d = fs_->Mkdir(kRootIno, "newdir");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(S_ISDIR(d->attr.st_mode));
  EXPECT_TRUE(client_->Keys(kBucket).empty());  // nothing in S3
  EXPECT_TRUE(S_ISDIR(fs_->Lookup(kRootIno, "newdir")->attr.st_mode));
  auto names = Names(ListDir(kRootIno, false));
  EXPECT_EQ(names, (std::vector<std::string>{".", "..", "newdir"}));
  // Nested local directory, then a file in it.
  auto sub = fs_->Mkdir(d->ino, "sub");
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(fs_->Rmdir(kRootIno, "newdir").error().errno_value, ENOTEMPTY);
  auto c = fs_->Create(sub->ino, "f", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("x")).ok());
  EXPECT_EQ(fs_->Rmdir(d->ino, "sub").error().errno_value, ENOTEMPTY);  // file being written
  fs_->Release(c->second.fh);
  EXPECT_EQ(client_->Data(kBucket, "newdir/sub/f"), "x");
  EXPECT_EQ(fs_->Rmdir(d->ino, "sub").error().errno_value, ENOTEMPTY);  // object in S3
}

TEST_F(FsNamespaceTest, MkdirWithMarkersAndRmdirDeletesMarker) {
  FsConfig config;
  config.dir_markers = true;
  Mount(config);
  ASSERT_TRUE(fs_->Mkdir(kRootIno, "m").ok());
  EXPECT_TRUE(client_->Exists(kBucket, "m/"));
  // A fresh mount sees it through the marker.
  Mount(config);
  auto d = fs_->Lookup(kRootIno, "m");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(S_ISDIR(d->attr.st_mode));
  EXPECT_EQ(Names(ListDir(d->ino, false)), (std::vector<std::string>{".", ".."}));
  ASSERT_TRUE(fs_->Rmdir(kRootIno, "m").ok());
  EXPECT_FALSE(client_->Exists(kBucket, "m/"));
}

TEST_F(FsNamespaceTest, RmdirOfNonEmptyOrMissingDirectory) {
  client_->Put(kBucket, "d/x", "1");
  Mount();
  EXPECT_EQ(fs_->Rmdir(kRootIno, "d").error().errno_value, ENOTEMPTY);
  EXPECT_EQ(fs_->Rmdir(kRootIno, "nope").error().errno_value, ENOENT);
}

TEST_F(FsNamespaceTest, RenameFileCopiesThenDeletes) {
  client_->Put(kBucket, "a", "content");
  client_->Put(kBucket, "d/keep", "k");
  Mount();
  auto a = fs_->Lookup(kRootIno, "a");
  auto d = fs_->Lookup(kRootIno, "d");
  ASSERT_TRUE(a.ok() && d.ok());
  ASSERT_TRUE(fs_->Rename(kRootIno, "a", d->ino, "b", 0).ok());
  EXPECT_FALSE(client_->Exists(kBucket, "a"));
  EXPECT_EQ(client_->Data(kBucket, "d/b"), "content");
  EXPECT_EQ(fs_->inodes().Get(a->ino)->key, "d/b");  // the inode follows its object
  EXPECT_EQ(*fs_->inodes().Find(d->ino, "b"), a->ino);
  EXPECT_EQ(ReadAll(a->ino), "content");
}

TEST_F(FsNamespaceTest, RenameOntoExistingFile) {
  client_->Put(kBucket, "a", "new");
  client_->Put(kBucket, "b", "old");
  Mount();
  EXPECT_EQ(fs_->Rename(kRootIno, "a", kRootIno, "b", 0).error().errno_value, EPERM);
  FsConfig config;
  config.allow_overwrite = true;
  Mount(config);
  EXPECT_EQ(fs_->Rename(kRootIno, "a", kRootIno, "b", RENAME_NOREPLACE).error().errno_value,
            EEXIST);
  EXPECT_EQ(fs_->Rename(kRootIno, "a", kRootIno, "b", RENAME_EXCHANGE).error().errno_value, EINVAL);
  ASSERT_TRUE(fs_->Rename(kRootIno, "a", kRootIno, "b", 0).ok());
  EXPECT_EQ(client_->Data(kBucket, "b"), "new");
  EXPECT_FALSE(client_->Exists(kBucket, "a"));
}

TEST_F(FsNamespaceTest, DirectoryRenameRefusedUnlessAllowed) {
  client_->Put(kBucket, "src/a", "1");
  client_->Put(kBucket, "src/deep/b", "2");
  Mount();
  EXPECT_EQ(fs_->Rename(kRootIno, "src", kRootIno, "dst", 0).error().errno_value, EXDEV);
  FsConfig config;
  config.allow_dir_rename = true;
  config.dir_rename_max_keys = 1;
  Mount(config);
  EXPECT_EQ(fs_->Rename(kRootIno, "src", kRootIno, "dst", 0).error().errno_value, EXDEV);
  config.dir_rename_max_keys = 100;
  Mount(config);
  auto src = fs_->Lookup(kRootIno, "src");
  auto deep = fs_->Lookup(src->ino, "deep");
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(fs_->Rename(kRootIno, "src", src->ino, "inside", 0).error().errno_value, EINVAL);
  ASSERT_TRUE(fs_->Rename(kRootIno, "src", kRootIno, "dst", 0).ok());
  EXPECT_EQ(client_->Keys(kBucket), (std::vector<std::string>{"dst/a", "dst/deep/b"}));
  EXPECT_EQ(fs_->inodes().Get(deep->ino)->key, "dst/deep/");
  auto b = fs_->Lookup(deep->ino, "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(ReadAll(b->ino), "2");
}

TEST_F(FsNamespaceTest, SetAttrTimesAndModeAreAcceptedSizeIsNot) {
  client_->Put(kBucket, "f", "abc");
  Mount();
  auto e = fs_->Lookup(kRootIno, "f");
  SetAttrRequest touch;
  touch.mtime = touch.atime = touch.mode = true;
  auto st = fs_->SetAttr(e->ino, touch);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_size, 3);
  SetAttrRequest grow;
  grow.size = 10;
  EXPECT_EQ(fs_->SetAttr(e->ino, grow).error().errno_value, EPERM);
  SetAttrRequest same;
  same.size = 3;
  EXPECT_TRUE(fs_->SetAttr(e->ino, same).ok());
}

TEST_F(FsNamespaceTest, CreateInBucketListRootIsRefused) {
  all_buckets_ = true;
  Mount();
  EXPECT_EQ(fs_->Create(kRootIno, "f", O_WRONLY).error().errno_value, EPERM);
}

}  // namespace
}  // namespace bucketfs::fs
