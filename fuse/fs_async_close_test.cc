// --async-close: close returns before the upload, fsync of a directory and
// shutdown wait for it, a failure is reported, readers wait for the bytes.
#include <gtest/gtest.h>

#include <future>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsAsyncCloseTest : public FsTest {
 protected:
  void SetUp() override {
    FsConfig c;
    c.async_close = true;
    Mount(c);
  }
  // create, write, close (flush + release) as an application does.
  void WriteAndClose(const std::string& name, const std::string& data) {
    auto c = fs_->Create(kRootIno, name, O_WRONLY | O_CREAT);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes(data)).ok());
    ASSERT_TRUE(fs_->Flush(c->second.fh).ok());
    fs_->Release(c->second.fh);
  }
};

TEST_F(FsAsyncCloseTest, CloseReturnsBeforeTheUploadAndFsyncDirWaitsForIt) {
  client_->Hold("PutObject");
  WriteAndClose("f", "hello");  // returns while the PUT cannot answer
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
  WriteAndClose("f", "bytes");
  auto ino = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(ino.ok());
  auto read = std::async(std::launch::async, [&] { return ReadAll(ino->ino); });
  EXPECT_EQ(read.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_EQ(read.get(), "bytes");
}

TEST_F(FsAsyncCloseTest, AFailedUploadIsReportedByTheNextFsyncDirOnce) {
  client_->FailNext("PutObject", EACCES);
  WriteAndClose("f", "x");
  Status s = fs_->FsyncDir(kRootIno);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EACCES);
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_TRUE(fs_->FsyncDir(kRootIno).ok());
  auto gone = fs_->Lookup(kRootIno, "f");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().errno_value, ENOENT);
}

TEST_F(FsAsyncCloseTest, RenameOfAFileStillUploadingWaitsForItThenMovesIt) {
  client_->Hold("PutObject");
  WriteAndClose("c.tmp", "chunk");
  auto renamed = std::async(std::launch::async,
                            [&] { return fs_->Rename(kRootIno, "c.tmp", kRootIno, "c", 0); });
  EXPECT_EQ(renamed.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_TRUE(renamed.get().ok());
  EXPECT_EQ(client_->Data(kBucket, "c"), "chunk");
  EXPECT_FALSE(client_->Exists(kBucket, "c.tmp"));
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
  for (int i = 0; i < 5; ++i) WriteAndClose("f" + std::to_string(i), "data");
  auto done = std::async(std::launch::async, [&] { return fs_->Shutdown(); });
  EXPECT_EQ(done.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  EXPECT_TRUE(done.get().ok());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(client_->Exists(kBucket, "f" + std::to_string(i)));
}

}  // namespace
}  // namespace bucketfs::fs
