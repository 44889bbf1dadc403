// Symbolic links through the filesystem core, stored as s3fs stores them:
// the body is the target, x-amz-meta-mode is S_IFLNK|0777 in decimal.
#include <gtest/gtest.h>
#include <linux/fs.h>

#include "fuse/object_type.h"
#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

const s3::UserMetadata kS3fsLink = {
    {"mode", "41471"}, {"mtime", "1700000000"}, {"uid", "0"}, {"gid", "0"}};

class FsSymlinkTest : public FsTest {
 protected:
  // name -> (st_mode of the entry, ino it carried) of one readdir(plus) pass.
  std::map<std::string, std::pair<mode_t, Ino>> Types(Ino dir, bool plus) {
    std::map<std::string, std::pair<mode_t, Ino>> out;
    auto fh = fs_->OpenDir(dir);
    EXPECT_TRUE(fh.ok());
    Status s = fs_->ReadDir(
        dir, fh->fh, 0, plus,
        [&](const std::string& name, const struct stat& st, const Entry* entry, off_t) {
          out[name] = {st.st_mode & S_IFMT, entry ? entry->ino : 0};
          return true;
        });
    EXPECT_TRUE(s.ok());
    fs_->ReleaseDir(fh->fh);
    return out;
  }
};

TEST_F(FsSymlinkTest, SymlinkIsAnObjectS3fsReadsAsALink) {
  Mount();
  auto e = fs_->Symlink("dir/target.txt", kRootIno, "l");
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_TRUE(S_ISLNK(e->attr.st_mode));
  EXPECT_EQ(e->attr.st_mode & 07777, 0777);
  EXPECT_EQ(e->attr.st_size, 14);
  EXPECT_EQ(client_->Data(kBucket, "l"), "dir/target.txt");
  EXPECT_EQ(client_->Metadata(kBucket, "l").at("mode"), "41471");
  EXPECT_EQ(client_->Metadata(kBucket, "l").count("mtime"), 1u);
  // This mount knows the target it wrote: readlink asks nothing.
  EXPECT_EQ(*fs_->ReadLink(e->ino), "dir/target.txt");
  EXPECT_EQ(client_->Calls("GetObject"), 0);
  EXPECT_EQ(client_->Calls("HeadObject"), 0);
  EXPECT_TRUE(S_ISLNK(fs_->Lookup(kRootIno, "l")->attr.st_mode));
  // Opening a link is refused (the kernel follows links itself).
  EXPECT_EQ(fs_->Open(e->ino, O_RDONLY).error().errno_value, ELOOP);
}

TEST_F(FsSymlinkTest, LinkMadeByS3fsIsALinkHere) {
  client_->PutWithMetadata(kBucket, "d/l", "../a/b", kS3fsLink);
  Mount();
  auto d = fs_->Lookup(kRootIno, "d");
  ASSERT_TRUE(d.ok());
  auto l = fs_->Lookup(d->ino, "l");
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(S_ISLNK(l->attr.st_mode));
  EXPECT_EQ(l->attr.st_size, 6);
  EXPECT_EQ(*fs_->ReadLink(l->ino), "../a/b");
  EXPECT_EQ(*fs_->ReadLink(l->ino), "../a/b");
  EXPECT_EQ(client_->Calls("GetObject"), 1);  // the target is kept with the inode
  EXPECT_TRUE(S_ISLNK(*&fs_->GetAttr(l->ino)->st_mode));
}

TEST_F(FsSymlinkTest, ListingsTellLinksOnlyWhenKnownAndNeverHeadLargeFiles) {
  client_->Put(kBucket, "big", std::string(kMaxLinkTargetSize + 1, 'x'));
  client_->Put(kBucket, "empty", "");
  client_->Put(kBucket, "small", "hello");
  client_->PutWithMetadata(kBucket, "link", "big", kS3fsLink);
  FsConfig config;
  config.readdirplus = FsConfig::ReaddirPlus::kOn;
  Mount(config);
  auto t = Types(kRootIno, true);
  // Sizes that rule out a link carry attributes; the others carry none, so
  // that a stat looks them up (and the lookup asks their type).
  EXPECT_EQ(t["big"].first, S_IFREG);
  EXPECT_NE(t["big"].second, 0u);
  EXPECT_NE(t["empty"].second, 0u);
  EXPECT_EQ(t["small"].second, 0u);
  EXPECT_EQ(t["link"].second, 0u);
  EXPECT_EQ(client_->Calls("HeadObject"), 0);
  // Lookups of large or empty files ask nothing (the listing is held).
  ASSERT_TRUE(fs_->Lookup(kRootIno, "big").ok());
  ASSERT_TRUE(fs_->Lookup(kRootIno, "empty").ok());
  EXPECT_EQ(client_->Calls("HeadObject"), 0);
  // Small ones: one HEAD each, then known.
  EXPECT_TRUE(S_ISREG(fs_->Lookup(kRootIno, "small")->attr.st_mode));
  EXPECT_TRUE(S_ISLNK(fs_->Lookup(kRootIno, "link")->attr.st_mode));
  EXPECT_EQ(client_->Calls("HeadObject"), 2);
  ASSERT_TRUE(fs_->Lookup(kRootIno, "link").ok());
  EXPECT_EQ(client_->Calls("HeadObject"), 2);
  // A new listing keeps what is known of the same versions.
  t = Types(kRootIno, true);
  EXPECT_EQ(t["link"].first, S_IFLNK);
  EXPECT_NE(t["link"].second, 0u);
  EXPECT_EQ(t["small"].first, S_IFREG);
  EXPECT_NE(t["small"].second, 0u);
  t = Types(kRootIno, false);  // plain readdir: d_type
  EXPECT_EQ(t["link"].first, S_IFLNK);
  EXPECT_EQ(t["big"].first, S_IFREG);
  EXPECT_EQ(client_->Calls("HeadObject"), 2);
}

TEST_F(FsSymlinkTest, AWalkOverLargeFilesCostsNoHead) {
  for (int i = 0; i < 20; ++i) {
    client_->Put(kBucket, "data/f" + std::to_string(i), std::string(5000, 'x'));
  }
  FsConfig config;
  config.readdirplus = FsConfig::ReaddirPlus::kOn;
  Mount(config);
  auto d = fs_->Lookup(kRootIno, "data");
  ASSERT_TRUE(d.ok());
  auto entries = ListDir(d->ino, true);
  ASSERT_EQ(entries.size(), 22u);
  for (const auto& e : entries) {
    if (e.name == "." || e.name == "..") continue;
    EXPECT_NE(e.ino, 0u) << e.name;
    EXPECT_TRUE(S_ISREG(fs_->Lookup(d->ino, e.name)->attr.st_mode));
  }
  EXPECT_EQ(client_->Calls("HeadObject"), 1);  // the lookup of "data" itself
}

TEST_F(FsSymlinkTest, UnknownOrForeignModesAreRegularFiles) {
  client_->PutWithMetadata(kBucket, "garbage", "x", {{"mode", "not-a-number"}});
  client_->PutWithMetadata(kBucket, "dirmode", "x", {{"mode", "16877"}});  // S_IFDIR|0755
  client_->PutWithMetadata(kBucket, "plain", "x", {{"mode", "33188"}});    // S_IFREG|0644
  client_->Put(kBucket, "none", "x");
  Mount();
  for (const char* name : {"garbage", "dirmode", "plain", "none"}) {
    auto e = fs_->Lookup(kRootIno, name);
    ASSERT_TRUE(e.ok()) << name;
    EXPECT_TRUE(S_ISREG(e->attr.st_mode)) << name;
    EXPECT_EQ(fs_->ReadLink(e->ino).error().errno_value, EINVAL) << name;
    EXPECT_EQ(ReadAll(e->ino), "x") << name;
  }
}

TEST_F(FsSymlinkTest, RenamedLinkStaysALinkAndDanglingLinksAreFine) {
  FsConfig config;
  config.allow_delete = true;
  Mount(config);
  ASSERT_TRUE(fs_->Symlink("/nowhere/at/all", kRootIno, "l").ok());
  ASSERT_TRUE(fs_->Rename(kRootIno, "l", kRootIno, "m", 0).ok());
  EXPECT_FALSE(client_->Exists(kBucket, "l"));
  EXPECT_EQ(client_->Metadata(kBucket, "m").at("mode"), "41471");
  Mount(config);  // nothing remembered
  auto m = fs_->Lookup(kRootIno, "m");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(S_ISLNK(m->attr.st_mode));
  EXPECT_EQ(*fs_->ReadLink(m->ino), "/nowhere/at/all");
  ASSERT_TRUE(fs_->Unlink(kRootIno, "m").ok());
  EXPECT_FALSE(client_->Exists(kBucket, "m"));
}

TEST_F(FsSymlinkTest, TargetsMustBeAPath) {
  Mount();
  EXPECT_EQ(fs_->Symlink("", kRootIno, "l").error().errno_value, ENOENT);
  EXPECT_EQ(
      fs_->Symlink(std::string(kMaxLinkTargetSize + 1, 'a'), kRootIno, "l").error().errno_value,
      ENAMETOOLONG);
  EXPECT_TRUE(fs_->Symlink(std::string(kMaxLinkTargetSize, 'a'), kRootIno, "l").ok());
  FsConfig ro;
  ro.read_only = true;
  Mount(ro);
  EXPECT_EQ(fs_->Symlink("x", kRootIno, "k").error().errno_value, EROFS);
}

TEST_F(FsSymlinkTest, AFileReplacingALinkGetsANewInode) {
  client_->PutWithMetadata(kBucket, "n", "t", kS3fsLink);
  FsConfig config;
  config.metadata_ttl = 0;  // every lookup asks S3
  Mount(config);
  auto first = fs_->Lookup(kRootIno, "n");
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(S_ISLNK(first->attr.st_mode));
  client_->Put(kBucket, "n", "now a file");
  auto second = fs_->Lookup(kRootIno, "n");
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(S_ISREG(second->attr.st_mode));
  EXPECT_NE(second->ino, first->ino);  // the kernel cannot change an inode's type
}

}  // namespace
}  // namespace bucketfs::fs
