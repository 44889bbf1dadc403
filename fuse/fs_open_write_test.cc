// Files open for writing behave like local files: reads through the write
// handle and through other handles, shared writers, fsync that keeps the
// file writable, and truncate of a closed object.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsOpenWriteTest : public FsTest {
 protected:
  void MountRw(uint64_t part_size = 16ull << 20) {
    FsConfig config;
    config.allow_overwrite = true;
    config.allow_delete = true;
    config.write_part_size = part_size;
    Mount(config);
  }
  std::string ReadFh(uint64_t fh, uint64_t offset, size_t n) {
    std::vector<std::byte> buf(n);
    auto r = fs_->Read(fh, offset, buf);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    return r.ok() ? std::string(reinterpret_cast<const char*>(buf.data()), *r) : "";
  }
  Status WriteFh(uint64_t fh, uint64_t offset, const std::string& s) {
    auto r = fs_->Write(fh, offset, std::as_bytes(std::span(s.data(), s.size())));
    return r.ok() ? Status::Ok() : Status(r.error());
  }
  Ino LookupIno(const std::string& name) {
    auto e = fs_->Lookup(kRootIno, name);
    EXPECT_TRUE(e.ok());
    return e.ok() ? e->ino : 0;
  }
};

TEST_F(FsOpenWriteTest, ReadYourWritesOnTheSameHandle) {
  MountRw();
  auto c = fs_->Create(kRootIno, "f", O_RDWR | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(WriteFh(c->second.fh, 0, "hello world").ok());
  EXPECT_EQ(ReadFh(c->second.fh, 0, 100), "hello world");
  EXPECT_EQ(ReadFh(c->second.fh, 6, 3), "wor");
  ASSERT_TRUE(fs_->Flush(c->second.fh).ok());
  fs_->Release(c->second.fh);
  EXPECT_EQ(client_->Data(kBucket, "f"), "hello world");
}

TEST_F(FsOpenWriteTest, PwriteThenPreadOnAnExistingObject) {
  client_->Put(kBucket, "db", std::string(10000, 'a'));
  MountRw(5 << 20);
  auto opened = fs_->Open(LookupIno("db"), O_RDWR);
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE(opened->direct_io);
  ASSERT_TRUE(WriteFh(opened->fh, 4096, "PAGE").ok());
  EXPECT_EQ(ReadFh(opened->fh, 4094, 8), "aaPAGEaa");
  EXPECT_EQ(ReadFh(opened->fh, 0, 4), "aaaa");
  fs_->Release(opened->fh);
  std::string want(10000, 'a');
  want.replace(4096, 4, "PAGE");
  EXPECT_EQ(client_->Data(kBucket, "db"), want);
}

TEST_F(FsOpenWriteTest, SecondOpensShareTheWriter) {
  MountRw();
  auto c = fs_->Create(kRootIno, "s", O_WRONLY | O_CREAT, 7);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(WriteFh(c->second.fh, 0, "first").ok());
  const Ino ino = c->first.ino;
  auto reader = fs_->Open(ino, O_RDONLY);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(reader->direct_io);
  EXPECT_EQ(ReadFh(reader->fh, 0, 100), "first");
  auto writer2 = fs_->Open(ino, O_RDWR, 8);
  ASSERT_TRUE(writer2.ok());
  ASSERT_TRUE(WriteFh(writer2->fh, 5, "+second").ok());
  EXPECT_EQ(ReadFh(reader->fh, 0, 100), "first+second");
  // The close of one writer makes the bytes durable; the other writes on.
  ASSERT_TRUE(fs_->Flush(writer2->fh, 8).ok());
  fs_->Release(writer2->fh);
  EXPECT_EQ(client_->Data(kBucket, "s"), "first+second");
  ASSERT_TRUE(WriteFh(c->second.fh, 12, "!").ok());
  ASSERT_TRUE(fs_->Flush(c->second.fh, 7).ok());
  fs_->Release(c->second.fh);
  EXPECT_EQ(client_->Data(kBucket, "s"), "first+second!");
  EXPECT_EQ(ReadFh(reader->fh, 0, 100), "first+second!");  // the committed object
  fs_->Release(reader->fh);
}

TEST_F(FsOpenWriteTest, FsyncKeepsTheFileWritable) {
  MountRw(5 << 20);
  auto c = fs_->Create(kRootIno, "ckpt", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  const std::string a(6 << 20, 'x');
  ASSERT_TRUE(WriteFh(c->second.fh, 0, a).ok());
  ASSERT_TRUE(fs_->Fsync(c->second.fh).ok());
  EXPECT_EQ(client_->Data(kBucket, "ckpt"), a);
  auto st = fs_->GetAttr(c->first.ino);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_size, static_cast<off_t>(a.size()));
  ASSERT_TRUE(WriteFh(c->second.fh, a.size(), "more").ok());
  ASSERT_TRUE(fs_->Fsync(c->second.fh).ok());
  EXPECT_EQ(client_->Data(kBucket, "ckpt"), a + "more");
  EXPECT_GE(client_->Calls("UploadPartCopy"), 1);  // the first part, server side
  fs_->Release(c->second.fh);
  EXPECT_EQ(client_->Data(kBucket, "ckpt"), a + "more");
}

TEST_F(FsOpenWriteTest, TruncateOfAClosedObjectShrinksAndGrows) {
  client_->Put(kBucket, "t", "0123456789");
  MountRw();
  const Ino ino = LookupIno("t");
  SetAttrRequest shrink;
  shrink.size = 4;
  auto st = fs_->SetAttr(ino, shrink);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(st->st_size, 4);
  EXPECT_EQ(client_->Data(kBucket, "t"), "0123");
  SetAttrRequest grow;
  grow.size = 8;
  ASSERT_TRUE(fs_->SetAttr(ino, grow).ok());
  EXPECT_EQ(client_->Data(kBucket, "t"), std::string("0123\0\0\0\0", 8));
}

TEST_F(FsOpenWriteTest, TruncateNeedsAllowOverwrite) {
  client_->Put(kBucket, "t", "0123456789");
  Mount();
  SetAttrRequest shrink;
  shrink.size = 4;
  EXPECT_EQ(fs_->SetAttr(LookupIno("t"), shrink).error().errno_value, EPERM);
  EXPECT_EQ(client_->Data(kBucket, "t"), "0123456789");
}

TEST_F(FsOpenWriteTest, UnlinkAfterFsyncLeavesNoObject) {
  MountRw();
  auto c = fs_->Create(kRootIno, "u", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(WriteFh(c->second.fh, 0, "data").ok());
  ASSERT_TRUE(fs_->Fsync(c->second.fh).ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "u").ok());
  ASSERT_TRUE(WriteFh(c->second.fh, 4, "more").ok());
  EXPECT_TRUE(fs_->Fsync(c->second.fh).ok());
  fs_->Release(c->second.fh);
  EXPECT_FALSE(client_->Exists(kBucket, "u"));
}

// close() returns before the kernel's release ends the upload; an open for
// reading in between waits for its result and reads the new object (not the
// old version the inode knew, not EBUSY).
TEST_F(FsOpenWriteTest, AnOpenRacingTheReleaseThatEndsTheUploadReadsTheNewObject) {
  client_->Put(kBucket, "f", "old bytes");
  MountRw();
  const Ino ino = LookupIno("f");
  ASSERT_EQ(ReadAll(ino), "old bytes");
  auto w = fs_->Open(ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(WriteFh(w->fh, 0, "new").ok());
  client_->Hold("PutObject");
  std::thread release([&] { fs_->Release(w->fh); });
  while (client_->Waiting("PutObject") == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto read = std::async(std::launch::async, [&] { return ReadAll(ino); });
  EXPECT_EQ(read.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  release.join();
  EXPECT_EQ(read.get(), "new");
}

}  // namespace
}  // namespace bucketfs::fs
