// --preserve-attrs: mode, owner and mtime in user metadata, s3fs's names.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsPreserveAttrsTest : public FsTest {
 protected:
  Filesystem& MountPreserving() {
    FsConfig config;
    config.preserve_attrs = true;
    return Mount(config);
  }
  static SetAttrRequest Chmod(mode_t mode) {
    SetAttrRequest r;
    r.mode = true;
    r.mode_value = mode;
    return r;
  }
};

TEST_F(FsPreserveAttrsTest, WithoutTheFlagNothingIsStored) {
  client_->PutWithMetadata(kBucket, "f", "x", {{"mode", "33261"}, {"uid", "1000"}});
  Mount();
  auto f = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->attr.st_mode & 07777, 0644);
  EXPECT_EQ(f->attr.st_uid, 0u);
  ASSERT_TRUE(fs_->SetAttr(f->ino, Chmod(0600)).ok());
  EXPECT_EQ(client_->Calls("CopyObject"), 0);
}

TEST_F(FsPreserveAttrsTest, S3fsMetadataIsShown) {
  client_->PutWithMetadata(
      kBucket, "f", std::string(10000, 'x'),
      {{"mode", "33261"}, {"uid", "1000"}, {"gid", "1001"}, {"mtime", "1600000000"}});
  client_->PutWithMetadata(kBucket, "bad", "x", {{"mode", "x"}, {"uid", "-1"}});
  MountPreserving();
  // A listing lacks metadata: even a large file gets no attributes from it.
  auto f = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->attr.st_mode, S_IFREG | 0755);
  EXPECT_EQ(f->attr.st_uid, 1000u);
  EXPECT_EQ(f->attr.st_gid, 1001u);
  EXPECT_EQ(f->attr.st_mtim.tv_sec, 1600000000);
  auto bad = fs_->Lookup(kRootIno, "bad");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->attr.st_mode, S_IFREG | 0644);  // malformed values: the mount's defaults
}

TEST_F(FsPreserveAttrsTest, ChmodChownAndUtimesAreStoredInPlace) {
  client_->PutWithMetadata(kBucket, "f", "data", {{"custom", "kept"}});
  MountPreserving();
  auto f = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(f.ok());
  auto st = fs_->SetAttr(f->ino, Chmod(0600));
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(st->st_mode, S_IFREG | 0600);
  SetAttrRequest touch;
  touch.mtime = true;
  touch.mtime_value = std::chrono::system_clock::time_point(std::chrono::seconds(1500000000));
  touch.uid = true;
  touch.uid_value = 42;
  ASSERT_TRUE(fs_->SetAttr(f->ino, touch).ok());
  EXPECT_EQ(client_->Calls("CopyObject"), 2);
  EXPECT_EQ(client_->Data(kBucket, "f"), "data");
  auto meta = client_->Metadata(kBucket, "f");
  EXPECT_EQ(meta["mode"], "33152");  // S_IFREG|0600, as s3fs writes it
  EXPECT_EQ(meta["uid"], "42");
  EXPECT_EQ(meta["mtime"], "1500000000");
  EXPECT_EQ(meta["custom"], "kept");
  MountPreserving();  // across a remount
  auto again = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->attr.st_mode, S_IFREG | 0600);
  EXPECT_EQ(again->attr.st_uid, 42u);
  EXPECT_EQ(again->attr.st_mtim.tv_sec, 1500000000);
  EXPECT_EQ(ReadAll(again->ino), "data");
}

TEST_F(FsPreserveAttrsTest, AttributesSetWhileWritingAreStoredAfterTheUpload) {
  MountPreserving();
  auto c = fs_->Create(kRootIno, "w", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("abc")).ok());
  ASSERT_TRUE(fs_->SetAttr(c->first.ino, Chmod(0700)).ok());
  ASSERT_TRUE(fs_->Flush(c->second.fh).ok());
  fs_->Release(c->second.fh);
  EXPECT_EQ(client_->Metadata(kBucket, "w")["mode"], std::to_string(S_IFREG | 0700));
  EXPECT_EQ(client_->Data(kBucket, "w"), "abc");
  EXPECT_EQ(fs_->GetAttr(c->first.ino)->st_mode, S_IFREG | 0700);
}

TEST_F(FsPreserveAttrsTest, AttributesSetWhileTwoHandlesWriteSurviveEitherClosingFirst) {
  // Only the last release stores them: the first release passes them on.
  for (const bool newest_first : {true, false}) {
    SCOPED_TRACE(newest_first ? "newest handle released first" : "oldest handle released first");
    FsConfig config;
    config.preserve_attrs = true;
    config.allow_overwrite = true;  // a second open for writing needs it
    Mount(config);
    const std::string name = newest_first ? "newest" : "oldest";
    auto c = fs_->Create(kRootIno, name, O_WRONLY | O_CREAT);
    ASSERT_TRUE(c.ok());
    auto second = fs_->Open(c->first.ino, O_WRONLY);
    ASSERT_TRUE(second.ok()) << second.error().ToString();
    ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("abc")).ok());
    ASSERT_TRUE(fs_->SetAttr(c->first.ino, Chmod(0700)).ok());
    const uint64_t first_out = newest_first ? second->fh : c->second.fh;
    const uint64_t last_out = newest_first ? c->second.fh : second->fh;
    fs_->Release(first_out);
    EXPECT_FALSE(client_->Exists(kBucket, name));
    fs_->Release(last_out);
    EXPECT_EQ(client_->Data(kBucket, name), "abc");
    EXPECT_EQ(client_->Metadata(kBucket, name)["mode"], std::to_string(S_IFREG | 0700));
  }
}

TEST_F(FsPreserveAttrsTest, ChmodRightAfterACloseIsStoredOnTheUploadedObject) {
  // close() returns before the kernel's release reaches the daemon: a chmod
  // that comes while that release uploads waits for it, then changes the object.
  MountPreserving();
  auto c = fs_->Create(kRootIno, "f", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("abc")).ok());
  std::thread release = ReleaseHoldingThePut(c->second.fh);
  auto changed =
      std::async(std::launch::async, [&] { return fs_->SetAttr(c->first.ino, Chmod(0700)); });
  EXPECT_EQ(changed.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  release.join();
  auto st = changed.get();
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(st->st_mode, S_IFREG | 0700);
  EXPECT_EQ(client_->Data(kBucket, "f"), "abc");
  EXPECT_EQ(client_->Metadata(kBucket, "f")["mode"], std::to_string(S_IFREG | 0700));
}

}  // namespace
}  // namespace bucketfs::fs
