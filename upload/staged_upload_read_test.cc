// StagedUpload::Read: the file's bytes while it is written, from part
// buffers, the staging file and the base object, without changing what the
// commit sends or copies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "upload/staged_upload.h"
#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

std::string ReadRange(StagedUpload& w, uint64_t offset, size_t n) {
  std::vector<std::byte> buf(n);
  auto r = w.Read(offset, buf);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  if (!r.ok()) return "";
  return std::string(reinterpret_cast<const char*>(buf.data()), *r);
}

TEST_F(StagedUploadTest, ReadsANewFileAsWritten) {
  auto w = Make("new");
  const std::string a = Pattern(3000, 2);
  ASSERT_TRUE(w->Write(0, Bytes(a)).ok());
  ASSERT_TRUE(w->Write(5000, Bytes("tail")).ok());  // a hole in between
  std::string want = a + std::string(2000, '\0') + "tail";
  EXPECT_EQ(ReadRange(*w, 0, 10000), want);  // short at the end
  EXPECT_EQ(ReadRange(*w, 2990, 20), want.substr(2990, 20));
  EXPECT_EQ(ReadRange(*w, want.size(), 10), "");
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "new"), want);
  std::vector<std::byte> buf(4);
  EXPECT_EQ(w->Read(0, buf).error().errno_value, EBADF);
}

// A first write of 128 KiB or more fills part 0 in memory: reads come from
// the buffer, and after the part went out, from the staging file.
TEST_F(StagedUploadTest, ReadsPartsFilledInMemory) {
  ctx_.writer.part_size = 256 << 10;
  auto w = Make("filled");
  const std::string a = Pattern(200 << 10, 3);
  ASSERT_TRUE(w->Write(0, Bytes(a)).ok());
  EXPECT_EQ(ReadRange(*w, 100, 1000), a.substr(100, 1000));
  const std::string b = Pattern(400 << 10, 4);
  ASSERT_TRUE(w->Write(a.size(), Bytes(b)).ok());  // part 0 goes out
  EXPECT_EQ(ReadRange(*w, 0, a.size() + b.size()), a + b);
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "filled"), a + b);
}

// Over a base object: unchanged bytes come from the base (a ranged GET of
// its ETag), changed ones from the writer; untouched parts are still copied.
TEST_F(StagedUploadTest, ReadsOverABaseKeepPartsCopyable) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("over", base);
  ASSERT_TRUE(w->Write(6 << 20, Bytes("PATCH")).ok());  // part 1, mid-part
  std::string want = base;
  want.replace(6 << 20, 5, "PATCH");
  EXPECT_EQ(ReadRange(*w, (6 << 20) - 3, 11), want.substr((6 << 20) - 3, 11));
  EXPECT_EQ(ReadRange(*w, 100, 50), want.substr(100, 50));  // part 0: the base
  const int gets = client_->Calls("GetObject");
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "over"), want);
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 2);  // parts 0 and 2
  EXPECT_EQ(client_->Calls("GetObject"), gets);    // part 1's base bytes: fetched at the write
}

// A part rewritten from its start in order: its run from the writer, the
// rest of the part from the base, without fetching it into the staging file.
TEST_F(StagedUploadTest, ReadsAPartRewrittenFromItsStart) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("run", base);
  const std::string fresh = Pattern(1 << 20, 4);
  ASSERT_TRUE(w->Write(0, Bytes(fresh)).ok());
  EXPECT_EQ(ReadRange(*w, fresh.size() - 10, 20),
            fresh.substr(fresh.size() - 10) + base.substr(fresh.size(), 10));
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "run"), fresh + base.substr(fresh.size()));
}

// Shrinking into an untouched part keeps it copyable: the new object's last
// part is copied server side up to the new end.
TEST_F(StagedUploadTest, ShrinkCopiesTheCutPart) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((12 << 20) + 5, 9);
  auto w = MakeOver("cut", base);
  ASSERT_TRUE(w->Truncate((7 << 20) + 3).ok());
  EXPECT_EQ(ReadRange(*w, (7 << 20) - 2, 10), base.substr((7 << 20) - 2, 5));
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "cut"), base.substr(0, (7 << 20) + 3));
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 2);
  EXPECT_EQ(client_->Calls("UploadPart"), 0);
}

// Growing: the part holding the old end gets its base bytes and zeros after.
TEST_F(StagedUploadTest, GrowZeroFills) {
  ctx_.writer.part_size = 5 << 20;
  const std::string base = Pattern((6 << 20) + 5, 9);
  auto w = MakeOver("grow", base);
  ASSERT_TRUE(w->Truncate(12 << 20).ok());
  const std::string want = base + std::string((12 << 20) - base.size(), '\0');
  EXPECT_EQ(ReadRange(*w, base.size() - 5, 10), want.substr(base.size() - 5, 10));
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Data(kBucket, "grow"), want);
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 1);  // part 0
}

}  // namespace
}  // namespace bucketfs::upload
