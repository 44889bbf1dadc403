// The open-handle counts the bucketfs_open_handles gauge exports: up at each
// open, back to zero once every handle is released.
#include <fcntl.h>
#include <gtest/gtest.h>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsOpenHandlesTest : public FsTest {};

TEST_F(FsOpenHandlesTest, CountsFilesAndDirsUntilReleased) {
  client_->Put(kBucket, "a", "hello");
  Mount();
  EXPECT_EQ(fs_->open_handles().files, 0u);
  EXPECT_EQ(fs_->open_handles().dirs, 0u);

  auto a = fs_->Lookup(kRootIno, "a");
  ASSERT_TRUE(a.ok());
  auto read = fs_->Open(a->ino, O_RDONLY);
  ASSERT_TRUE(read.ok());
  auto created = fs_->Create(kRootIno, "b", O_WRONLY | O_CREAT);
  ASSERT_TRUE(created.ok());
  auto dir = fs_->OpenDir(kRootIno);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(fs_->open_handles().files, 2u);
  EXPECT_EQ(fs_->open_handles().dirs, 1u);

  fs_->Release(read->fh);
  ASSERT_TRUE(fs_->Flush(created->second.fh).ok());
  fs_->Release(created->second.fh);
  fs_->ReleaseDir(dir->fh);
  EXPECT_EQ(fs_->open_handles().files, 0u);
  EXPECT_EQ(fs_->open_handles().dirs, 0u);
}

}  // namespace
}  // namespace bucketfs::fs
