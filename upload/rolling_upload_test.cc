// RollingUpload: versions committed by Sync while the file stays writable.
#include "upload/rolling_upload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

class RollingUploadTest : public StagedUploadTest {
 protected:
  std::unique_ptr<RollingUpload> Roll(const std::string& key) {
    return std::make_unique<RollingUpload>(ctx_, kBucket, key, Make(key), false);
  }
  static std::string ReadAll(RollingUpload& w) {
    std::vector<std::byte> buf(w.size());
    auto r = w.Read(0, buf);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    return r.ok() ? std::string(reinterpret_cast<const char*>(buf.data()), *r) : "";
  }
};

TEST_F(RollingUploadTest, SyncMakesTheObjectAndKeepsWriting) {
  ctx_.writer.part_size = 5 << 20;
  auto w = Roll("ckpt");
  const std::string a = Pattern((11 << 20) + 7, 1);
  ASSERT_TRUE(w->Write(0, Bytes(a)).ok());
  auto first = w->Sync();
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(client_->Data(kBucket, "ckpt"), a);
  EXPECT_EQ(ReadAll(*w), a);  // between versions: the committed object
  const int copies = client_->Calls("UploadPartCopy");
  const std::string b = Pattern(1000, 2);
  ASSERT_TRUE(w->Write(a.size(), Bytes(b)).ok());
  EXPECT_EQ(ReadAll(*w), a + b);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "ckpt"), a + b);
  EXPECT_EQ(client_->Calls("UploadPartCopy") - copies, 2);  // the next version copied parts 0, 1
  EXPECT_EQ(w->Write(0, Bytes("x")).error().errno_value, EBADF);
  EXPECT_EQ(ReadAll(*w), a + b);  // after the end: the object
}

TEST_F(RollingUploadTest, SyncWithNothingNewCostsNothing) {
  auto w = Roll("idle");
  ASSERT_TRUE(w->Write(0, Bytes("hello")).ok());
  ASSERT_TRUE(w->Sync().ok());
  const int puts = client_->Calls("PutObject");
  EXPECT_EQ(puts, 1);
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Calls("PutObject"), puts);
  EXPECT_EQ(client_->Data(kBucket, "idle"), "hello");
}

TEST_F(RollingUploadTest, EmptyNewFileIsCreatedBySync) {
  auto w = Roll("empty");
  ASSERT_TRUE(w->Sync().ok());
  EXPECT_EQ(client_->Data(kBucket, "empty"), "");
}

TEST_F(RollingUploadTest, TruncateAfterSyncBuildsTheNextVersion) {
  auto w = Roll("t");
  ASSERT_TRUE(w->Write(0, Bytes("0123456789")).ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Truncate(4).ok());
  EXPECT_EQ(w->size(), 4u);
  EXPECT_EQ(ReadAll(*w), "0123");
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "t"), "0123");
}

TEST_F(RollingUploadTest, AbortAfterSyncDropsOnlyTheCurrentVersion) {
  auto w = Roll("a");
  ASSERT_TRUE(w->Write(0, Bytes("kept")).ok());
  ASSERT_TRUE(w->Sync().ok());
  ASSERT_TRUE(w->Write(0, Bytes("lost")).ok());
  w->Abort();
  EXPECT_EQ(client_->Data(kBucket, "a"), "kept");
  EXPECT_FALSE(w->Commit().ok());
}

TEST_F(RollingUploadTest, AFailedSyncIsSticky) {
  auto w = Roll("f");
  ASSERT_TRUE(w->Write(0, Bytes("data")).ok());
  client_->FailNext("PutObject", EIO);
  EXPECT_FALSE(w->Sync().ok());
  EXPECT_FALSE(w->Write(0, Bytes("more")).ok());
  EXPECT_FALSE(w->Commit().ok());
}

}  // namespace
}  // namespace bucketfs::upload
