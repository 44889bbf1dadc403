// --async-close: close returns before the upload, fsync of a directory and
// shutdown wait for it, a failure is reported, readers wait for the bytes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <vector>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsAsyncCloseTest : public FsTest {
 protected:
  void SetUp() override {
    std::string dir = ::testing::TempDir() + "kept-XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    kept_dir_ = dir;
    FsConfig c;
    c.async_close = true;
    c.kept_uploads_dir = kept_dir_ + "/failed";
    Mount(c);
  }
  void TearDown() override { std::filesystem::remove_all(kept_dir_); }

  // Names in the kept-uploads directory, sorted.
  std::vector<std::string> Kept() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(kept_dir_ + "/failed", ec)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string Slurp(const std::string& name) const {
    std::ifstream in(kept_dir_ + "/failed/" + name);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string kept_dir_;
};

TEST_F(FsAsyncCloseTest, AFailedUploadKeepsItsBytesAndWhatTheyWereFor) {
  client_->FailNext("PutObject", EACCES);
  WriteAndClose(kRootIno, "f", "precious");
  ASSERT_FALSE(fs_->FsyncDir(kRootIno).ok());
  const auto names = Kept();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_TRUE(names[0].ends_with(".data")) << names[0];
  EXPECT_TRUE(names[1].ends_with(".info")) << names[1];
  EXPECT_EQ(Slurp(names[0]), "precious");
  const std::string info = Slurp(names[1]);
  EXPECT_TRUE(info.starts_with("s3://bkt/f\nsize 8\nerror ")) << info;
  struct stat st {};
  ASSERT_EQ(::stat((kept_dir_ + "/failed/" + names[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((kept_dir_ + "/failed").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const auto counts = fs_->background_uploads();
  EXPECT_EQ(counts.failed, 1u);
  EXPECT_EQ(counts.kept, 1u);
}

TEST_F(FsAsyncCloseTest, ASuccessfulUploadLeavesNoCopy) {
  WriteAndClose(kRootIno, "a", std::string(3 << 20, 'a'));
  WriteAndClose(kRootIno, "b", "bee");
  ASSERT_TRUE(fs_->FsyncDir(kRootIno).ok());
  EXPECT_EQ(client_->Data(kBucket, "b"), "bee");
  EXPECT_TRUE(Kept().empty());
  const auto counts = fs_->background_uploads();
  EXPECT_EQ(counts.succeeded, 2u);
  EXPECT_EQ(counts.kept, 0u);
}

TEST_F(FsAsyncCloseTest, CloseReturnsBeforeTheUploadAndFsyncDirWaitsForIt) {
  client_->Hold("PutObject");
  WriteAndClose(kRootIno, "f", "hello");  // returns while the PUT cannot answer
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  auto seen = fs_->Lookup(kRootIno, "f");  // listed with its size meanwhile
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->attr.st_size, 5);
  auto synced = std::async(std::launch::async, [&] { return fs_->FsyncDir(kRootIno); });
  EXPECT_EQ(synced.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_TRUE(synced.get().ok());
  EXPECT_EQ(client_->Data(kBucket, "f"), "hello");
}

TEST_F(FsAsyncCloseTest, AReaderOfAFileStillUploadingGetsItsBytes) {
  client_->Hold("PutObject");
  WriteAndClose(kRootIno, "f", "bytes");
  auto ino = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(ino.ok());
  auto read = std::async(std::launch::async, [&] { return ReadAll(ino->ino); });
  EXPECT_EQ(read.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_EQ(read.get(), "bytes");
}

TEST_F(FsAsyncCloseTest, TruncateAndChmodOfAFileStillUploadingWaitForItThenChangeTheObject) {
  FsConfig c;
  c.async_close = true;
  c.kept_uploads_dir = kept_dir_ + "/failed";
  c.allow_overwrite = true;
  c.preserve_attrs = true;
  Mount(c);
  client_->Hold("PutObject");
  WriteAndClose(kRootIno, "f", "0123456789");
  auto ino = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(ino.ok());
  SetAttrRequest change;
  change.size = 4;
  change.mode = true;
  change.mode_value = 0700;
  auto changed = std::async(std::launch::async, [&] { return fs_->SetAttr(ino->ino, change); });
  EXPECT_EQ(changed.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  auto st = changed.get();
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(st->st_size, 4);
  EXPECT_EQ(st->st_mode, S_IFREG | 0700);
  EXPECT_EQ(client_->Data(kBucket, "f"), "0123");
  EXPECT_EQ(client_->Metadata(kBucket, "f")["mode"], std::to_string(S_IFREG | 0700));
}

TEST_F(FsAsyncCloseTest, AFailedUploadIsReportedByTheNextFsyncDirOnce) {
  client_->FailNext("PutObject", EACCES);
  WriteAndClose(kRootIno, "f", "x");
  Status s = fs_->FsyncDir(kRootIno);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EACCES);
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_TRUE(fs_->FsyncDir(kRootIno).ok());
  auto gone = fs_->Lookup(kRootIno, "f");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().errno_value, ENOENT);
}

TEST_F(FsAsyncCloseTest, RenameOfAFileStillUploadingReturnsAtOnceAndMovesItAfter) {
  client_->Hold("PutObject");
  WriteAndClose(kRootIno, "c.tmp", "chunk");
  ASSERT_TRUE(fs_->Rename(kRootIno, "c.tmp", kRootIno, "c", 0).ok());  // PUT still held
  const int heads = client_->Calls("HeadObject");  // the target's lookup asked S3
  auto moved = fs_->Lookup(kRootIno, "c");
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->attr.st_size, 5);
  auto old_name = fs_->Lookup(kRootIno, "c.tmp");
  ASSERT_FALSE(old_name.ok());
  EXPECT_EQ(old_name.error().errno_value, ENOENT);
  client_->Release("PutObject");
  EXPECT_TRUE(fs_->FsyncDir(kRootIno).ok());
  EXPECT_EQ(client_->Data(kBucket, "c"), "chunk");
  EXPECT_FALSE(client_->Exists(kBucket, "c.tmp"));
  EXPECT_EQ(client_->Calls("PutObject"), 1);
  EXPECT_EQ(client_->Calls("CopyObject"), 1);
  EXPECT_EQ(client_->Calls("DeleteObject"), 1);
  EXPECT_EQ(client_->Calls("HeadObject"), heads);  // the upload's own attributes pin the copy
  EXPECT_EQ(ReadAll(moved->ino), "chunk");
}

TEST_F(FsAsyncCloseTest, AReaderOfAFileMovedWhileUploadingGetsItsBytes) {
  client_->Hold("PutObject");
  WriteAndClose(kRootIno, "m.tmp", "moved bytes");
  ASSERT_TRUE(fs_->Rename(kRootIno, "m.tmp", kRootIno, "m", 0).ok());
  auto m = fs_->Lookup(kRootIno, "m");
  ASSERT_TRUE(m.ok());
  auto read = std::async(std::launch::async, [&] { return ReadAll(m->ino); });
  EXPECT_EQ(read.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_EQ(read.get(), "moved bytes");
}

TEST_F(FsAsyncCloseTest, AMovedUploadThatFailsIsReportedAndLeavesNoName) {
  client_->Hold("PutObject");
  client_->FailNext("PutObject", EACCES);
  WriteAndClose(kRootIno, "c.tmp", "chunk");
  ASSERT_TRUE(fs_->Rename(kRootIno, "c.tmp", kRootIno, "c", 0).ok());
  client_->Release("PutObject");
  Status s = fs_->FsyncDir(kRootIno);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EACCES);
  EXPECT_FALSE(client_->Exists(kBucket, "c"));
  EXPECT_FALSE(client_->Exists(kBucket, "c.tmp"));
  EXPECT_EQ(fs_->Lookup(kRootIno, "c").error().errno_value, ENOENT);
  EXPECT_EQ(fs_->Lookup(kRootIno, "c.tmp").error().errno_value, ENOENT);
}

TEST_F(FsAsyncCloseTest, ANameMovedAwayCanBeWrittenAgainWithoutLosingEither) {
  client_->Hold("PutObject");
  WriteAndClose(kRootIno, "c.tmp", "first");
  ASSERT_TRUE(fs_->Rename(kRootIno, "c.tmp", kRootIno, "c", 0).ok());
  // Writing the old name again waits for the move (whose delete of the old
  // key would otherwise remove the new file).
  auto again = std::async(std::launch::async, [&] { WriteAndClose(kRootIno, "c.tmp", "second"); });
  EXPECT_EQ(again.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  again.get();
  EXPECT_TRUE(fs_->FsyncDir(kRootIno).ok());
  EXPECT_EQ(client_->Data(kBucket, "c"), "first");
  EXPECT_EQ(client_->Data(kBucket, "c.tmp"), "second");
}

TEST_F(FsAsyncCloseTest, ARenameBetweenCloseAndReleaseFindsTheUploadStarted) {
  // The kernel sends RELEASE after close() returned: the application's next
  // call (zarr's rename of its temporary file) can come first.
  auto c = fs_->Create(kRootIno, "c.partial", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("chunk")).ok());
  ASSERT_TRUE(fs_->Flush(c->second.fh).ok());
  EXPECT_TRUE(fs_->Rename(kRootIno, "c.partial", kRootIno, "c", 0).ok());
  fs_->Release(c->second.fh);
  EXPECT_TRUE(fs_->FsyncDir(kRootIno).ok());
  EXPECT_EQ(client_->Data(kBucket, "c"), "chunk");
  EXPECT_FALSE(client_->Exists(kBucket, "c.partial"));
  EXPECT_EQ(client_->Calls("PutObject"), 1);  // uploaded once, not again at release
}

TEST_F(FsAsyncCloseTest, ShutdownWaitsForEveryUpload) {
  client_->Hold("PutObject");
  for (int i = 0; i < 5; ++i) WriteAndClose(kRootIno, "f" + std::to_string(i), "data");
  auto done = std::async(std::launch::async, [&] { return fs_->Shutdown(); });
  EXPECT_EQ(done.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_TRUE(done.get().ok());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(client_->Exists(kBucket, "f" + std::to_string(i)));
}

}  // namespace
}  // namespace bucketfs::fs
