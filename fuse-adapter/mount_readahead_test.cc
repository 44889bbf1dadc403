#include "fuse-adapter/mount_readahead.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

constexpr const char* kMountinfo =
    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
    "40 22 0:39 / /tmp/a\\040b rw,nosuid,nodev - fuse.bucketfs s3://b rw,user_id=0\n"
    "41 22 0:40 / /tmp/mnt rw - fuse.bucketfs s3://b rw\n"
    "42 41 0:41 / /tmp/mnt rw - fuse.bucketfs s3://c rw\n"
    "43 22 0:42 / /tmp/mnt/sub rw - fuse.bucketfs s3://d rw";  // no final newline

TEST(MountReadaheadTest, FindsTheLastMountAtThePath) {
  EXPECT_EQ(MountDeviceFromMountinfo(kMountinfo, "/tmp/mnt"), "0:41");
  EXPECT_EQ(MountDeviceFromMountinfo(kMountinfo, "/tmp/mnt/sub"), "0:42");
}

TEST(MountReadaheadTest, UnescapesMountpoints) {
  EXPECT_EQ(MountDeviceFromMountinfo(kMountinfo, "/tmp/a b"), "0:39");
  EXPECT_EQ(MountDeviceFromMountinfo(kMountinfo, "/tmp/a\\040b"), std::nullopt);
}

TEST(MountReadaheadTest, NoMountIsNullopt) {
  EXPECT_EQ(MountDeviceFromMountinfo(kMountinfo, "/tmp"), std::nullopt);
  EXPECT_EQ(MountDeviceFromMountinfo("", "/tmp/mnt"), std::nullopt);
}

}  // namespace
}  // namespace bucketfs::fs
