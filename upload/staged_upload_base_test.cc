// StagedUpload over a base object (an open without O_TRUNC: append or
// in-place change): unchanged parts copied server side, base bytes fetched
// only where writes leave them, and the checksum fallback for stores that
// copy without reporting CRC32C.
#include <gtest/gtest.h>

#include <string>

#include "upload/staged_upload.h"
#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

TEST_F(StagedUploadTest, AppendToLargeObjectCopiesUnchangedParts) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("big", base);
  EXPECT_EQ(w->size(), base.size());
  const std::string tail = Pattern(1 << 20, 4);
  ASSERT_TRUE(w->Write(base.size(), Bytes(tail)).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "big"), base + tail);
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 2);  // parts 1, 2 server side
  EXPECT_EQ(client_->Calls("UploadPart"), 1);      // part 3: base tail + appended bytes
  EXPECT_EQ(client_->Calls("GetObject"), 1);
}

// An existing object opened without O_TRUNC and written again from the start
// (fio or dd conv=notrunc over an old file): the old bytes are never needed,
// so none are fetched.
TEST_F(StagedUploadTest, RewriteFromTheStartFetchesNoBaseBytes) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("re", base);
  const std::string fresh = Pattern(base.size(), 4);
  for (size_t at = 0; at < fresh.size(); at += 1 << 20) {
    const size_t n = std::min<size_t>(1 << 20, fresh.size() - at);
    ASSERT_TRUE(w->Write(at, Bytes(fresh.substr(at, n))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "re"), fresh);
  EXPECT_EQ(client_->Calls("GetObject"), 0);
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 0);
}

// A part rewritten only from its start up to some point: its old bytes past
// that point are fetched when it is sent, and only for that part.
TEST_F(StagedUploadTest, PartRewrittenInPartKeepsTheOldRest) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("half", base);
  const std::string fresh = Pattern(1 << 20, 4);
  ASSERT_TRUE(w->Write(0, Bytes(fresh)).ok());
  EXPECT_EQ(client_->Calls("GetObject"), 0);  // deferred: the run may go on
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "half"), fresh + base.substr(fresh.size()));
  EXPECT_EQ(client_->Calls("GetObject"), 1);       // the rest of part 1
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 2);  // parts 2 and 3 untouched
}

// A write that leaves the in-order run (a seek forward inside the part)
// needs the old bytes around it: they are fetched then, and the bytes of
// the run are kept.
TEST_F(StagedUploadTest, WriteLeavingTheRunFetchesTheOldBytesItSkips) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("skip", base);
  const std::string fresh = Pattern(1 << 20, 4);
  ASSERT_TRUE(w->Write(0, Bytes(fresh)).ok());
  ASSERT_TRUE(w->Write(3 << 20, Bytes("PATCH")).ok());
  EXPECT_EQ(client_->Calls("GetObject"), 1);
  ASSERT_TRUE(w->Write(0, Bytes("HEAD")).ok());  // back inside the run
  ASSERT_TRUE(w->Commit().ok());
  std::string want = base;
  want.replace(0, fresh.size(), fresh);
  want.replace(3 << 20, 5, "PATCH");
  want.replace(0, 4, "HEAD");
  EXPECT_EQ(client_->Data(kBucket, "skip"), want);
  EXPECT_EQ(client_->Calls("GetObject"), 1);
}

// A rewrite over a base object is summed like a new file: a CRC32C upload
// (MD5, which writers over a base used to take, costs several times more).
TEST_F(StagedUploadTest, RewriteOverABaseUploadsWithCrc32c) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("crc", base);
  const std::string fresh = Pattern(base.size(), 4);
  for (size_t at = 0; at < fresh.size(); at += 1 << 20) {
    const size_t n = std::min<size_t>(1 << 20, fresh.size() - at);
    ASSERT_TRUE(w->Write(at, Bytes(fresh.substr(at, n))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "crc"), fresh);
  EXPECT_EQ(client_->UploadChecksums(), std::vector{s3::BodyChecksum::kCrc32c});
}

// Parts copied into a CRC32C upload: Complete repeats the CRC32C the store
// reported for each copy (the fake, like S3, refuses a Complete without it).
TEST_F(StagedUploadTest, CopiedPartsCarryTheReportedCrc32c) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("patch", base);
  ASSERT_TRUE(w->Write(6 << 20, Bytes("PATCH")).ok());  // part 2 of 3
  ASSERT_TRUE(w->Commit().ok());
  std::string want = base;
  want.replace(6 << 20, 5, "PATCH");
  EXPECT_EQ(client_->Data(kBucket, "patch"), want);
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 2);  // parts 1 and 3
  EXPECT_EQ(client_->UploadChecksums(), std::vector{s3::BodyChecksum::kCrc32c});
}

// A store that copies a part without reporting its CRC32C (Complete could
// not name it): the writer starts over with an MD5 upload, sending the parts
// it had sent again, and the mount remembers: the next writer that will copy
// a part creates an MD5 upload at once.
TEST_F(StagedUploadTest, CopyWithoutCrc32cStartsOverWithMd5) {
  ctx_.writer.part_size = 5 << 20;
  ctx_.copies_unsummed = std::make_shared<std::atomic<bool>>(false);
  client_->SetCopyReportsCrc32c(false);
  const std::string base = Pattern((17 << 20) + 5, 9);
  auto w = MakeOver("nosum", base);
  const std::string fresh = Pattern(7 << 20, 4);  // part 1 goes out while writing
  for (size_t at = 0; at < fresh.size(); at += 1 << 20) {
    ASSERT_TRUE(w->Write(at, Bytes(fresh.substr(at, 1 << 20))).ok());
  }
  ASSERT_TRUE(w->Commit().ok());
  std::string want = base;
  want.replace(0, fresh.size(), fresh);
  EXPECT_EQ(client_->Data(kBucket, "nosum"), want);
  EXPECT_EQ(client_->UploadChecksums(),
            (std::vector{s3::BodyChecksum::kCrc32c, s3::BodyChecksum::kMd5}));
  EXPECT_EQ(client_->OpenUploads(), 0u);  // the CRC32C one was aborted
  EXPECT_TRUE(ctx_.copies_unsummed->load());

  auto again = MakeOver("nosum2", want);
  ASSERT_TRUE(again->Write(6 << 20, Bytes("PATCH")).ok());
  ASSERT_TRUE(again->Commit().ok());
  want.replace(6 << 20, 5, "PATCH");
  EXPECT_EQ(client_->Data(kBucket, "nosum2"), want);
  EXPECT_EQ(
      client_->UploadChecksums(),
      (std::vector{s3::BodyChecksum::kCrc32c, s3::BodyChecksum::kMd5, s3::BodyChecksum::kMd5}));
}

TEST_F(StagedUploadTest, InPlaceChangeOfSmallObjectIsOnePut) {
  auto w = MakeOver("s", "hello world");
  ASSERT_TRUE(w->Write(6, Bytes("WORLD")).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "s"), "hello WORLD");
  EXPECT_EQ(client_->Calls("PutObject"), 1);  // the commit (setup does not count)

  // Opened and closed without a change: nothing is uploaded.
  auto same = Make("s", BaseObject{"\"whatever\"", 11});
  ASSERT_TRUE(same->Commit().ok());
  EXPECT_EQ(client_->Calls("PutObject"), 1);
}

}  // namespace
}  // namespace bucketfs::upload
