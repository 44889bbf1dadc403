// mknod through the filesystem core: special files are empty objects whose
// metadata says their type (s3fs's names), and need --preserve-attrs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsMknodTest : public FsTest {
 protected:
  Filesystem& MountPreserving() {
    FsConfig config;
    config.preserve_attrs = true;
    return Mount(config);
  }
};

TEST_F(FsMknodTest, FifoIsAnEmptyObjectWithItsTypeInMetadata) {
  MountPreserving();
  auto e = fs_->Mknod(kRootIno, "fifo", S_IFIFO | 0640, 0);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_TRUE(S_ISFIFO(e->attr.st_mode));
  EXPECT_EQ(e->attr.st_mode & 07777, 0640);
  EXPECT_EQ(e->attr.st_size, 0);
  EXPECT_EQ(client_->Data(kBucket, "fifo"), "");
  EXPECT_EQ(client_->Metadata(kBucket, "fifo").at("mode"), std::to_string(S_IFIFO | 0640));
  // Known to this mount: no request to stat it.
  const int heads = client_->Calls("HeadObject");
  EXPECT_TRUE(S_ISFIFO(fs_->GetAttr(e->ino)->st_mode));
  EXPECT_EQ(client_->Calls("HeadObject"), heads);
}

TEST_F(FsMknodTest, DeviceNodeKeepsItsNumberAcrossARemount) {
  MountPreserving();
  const dev_t dev = makedev(1, 3);
  auto e = fs_->Mknod(kRootIno, "null", S_IFCHR | 0644, dev);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_TRUE(S_ISCHR(e->attr.st_mode));
  EXPECT_EQ(e->attr.st_rdev, dev);
  EXPECT_EQ(client_->Metadata(kBucket, "null").at("rdev"), std::to_string(dev));
  MountPreserving();
  auto again = fs_->Lookup(kRootIno, "null");
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_TRUE(S_ISCHR(again->attr.st_mode));
  EXPECT_EQ(again->attr.st_rdev, dev);
  EXPECT_EQ(again->attr.st_mode & 07777, 0644);
}

TEST_F(FsMknodTest, S3fsFifoIsAFifoHereAndChmodKeepsItsType) {
  client_->PutWithMetadata(kBucket, "p", "", {{"mode", std::to_string(S_IFIFO | 0600)}});
  MountPreserving();
  auto p = fs_->Lookup(kRootIno, "p");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(S_ISFIFO(p->attr.st_mode));
  SetAttrRequest chmod;
  chmod.mode = true;
  chmod.mode_value = 0644;
  auto st = fs_->SetAttr(p->ino, chmod);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(st->st_mode, S_IFIFO | 0644);
  EXPECT_EQ(client_->Metadata(kBucket, "p").at("mode"), std::to_string(S_IFIFO | 0644));
}

TEST_F(FsMknodTest, SpecialFilesNeedPreserveAttrs) {
  Mount();
  auto e = fs_->Mknod(kRootIno, "fifo", S_IFIFO | 0644, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().errno_value, EPERM);
  EXPECT_NE(e.error().ToString().find("--preserve-attrs"), std::string::npos);
  EXPECT_FALSE(client_->Exists(kBucket, "fifo"));
}

TEST_F(FsMknodTest, RegularMknodMakesAnEmptyFileAndNamesAreChecked) {
  Mount();
  auto e = fs_->Mknod(kRootIno, "empty", S_IFREG | 0644, 0);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_TRUE(S_ISREG(e->attr.st_mode));
  EXPECT_TRUE(client_->Exists(kBucket, "empty"));
  EXPECT_EQ(fs_->Mknod(kRootIno, std::string(300, 'n'), S_IFREG | 0644, 0).error().errno_value,
            ENAMETOOLONG);
  EXPECT_EQ(fs_->Mknod(kRootIno, "d", S_IFDIR | 0755, 0).error().errno_value, EINVAL);
}

}  // namespace
}  // namespace bucketfs::fs
