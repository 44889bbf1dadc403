// Reading and writing through the filesystem core over the fake client.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <future>
#include <thread>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsReadWriteTest : public FsTest {};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

TEST_F(FsReadWriteTest, ReadsMatchTheObject) {
  const std::string data = Pattern(100000);
  client_->Put(kBucket, "f", data);
  Mount();
  auto e = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(ReadAll(e->ino, 4096), data);
  EXPECT_EQ(ReadAll(e->ino, 65536), data);
  // Reads at and past the end return 0 bytes.
  auto opened = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(opened.ok());
  std::vector<std::byte> buf(10);
  EXPECT_EQ(*fs_->Read(opened->fh, data.size(), buf), 0u);
  EXPECT_EQ(*fs_->Read(opened->fh, data.size() + 100, buf), 0u);
  EXPECT_EQ(*fs_->Read(opened->fh, data.size() - 3, buf), 3u);
  fs_->Release(opened->fh);
}

TEST_F(FsReadWriteTest, ConcurrentReadersOfOneHandle) {
  const std::string data = Pattern(1 << 20);
  client_->Put(kBucket, "f", data);
  Mount();
  auto e = fs_->Lookup(kRootIno, "f");
  auto opened = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(opened.ok());
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::byte> buf(4096);
      for (size_t off = t * 4096; off < data.size(); off += 4 * 4096) {
        auto n = fs_->Read(opened->fh, off, buf);
        if (!n.ok() || std::memcmp(buf.data(), data.data() + off, *n) != 0) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  fs_->Release(opened->fh);
}

TEST_F(FsReadWriteTest, ChangedObjectFailsReadAndKeepCacheFollowsEtag) {
  client_->Put(kBucket, "f", "version one");
  FsConfig config;
  config.metadata_ttl = 0;
  Mount(config);
  auto e = fs_->Lookup(kRootIno, "f");
  auto first = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->keep_cache);
  fs_->Release(first->fh);
  auto second = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->keep_cache);  // same ETag as the previous open
  client_->Put(kBucket, "f", "version two!");
  std::vector<std::byte> buf(4);
  auto r = fs_->Read(second->fh, 0, buf);
  ASSERT_FALSE(r.ok());  // pinned to the ETag seen at open
  EXPECT_EQ(r.error().errno_value, EIO);
  fs_->Release(second->fh);
  auto third = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->keep_cache);
  fs_->Release(third->fh);
}

TEST_F(FsReadWriteTest, SmallFileIsOnePutAtFlush) {
  Mount();
  auto c = fs_->Create(kRootIno, "small", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  auto [entry, opened] = *c;
  ASSERT_TRUE(fs_->Write(opened.fh, 0, Bytes("hello ")).ok());
  ASSERT_TRUE(fs_->Write(opened.fh, 6, Bytes("world")).ok());
  // Visible, with its growing size, before it reaches S3.
  EXPECT_FALSE(client_->Exists(kBucket, "small"));
  EXPECT_EQ(fs_->GetAttr(entry.ino)->st_size, 11);
  auto names = Names(ListDir(kRootIno, false));
  EXPECT_NE(std::find(names.begin(), names.end(), "small"), names.end());
  ASSERT_TRUE(fs_->Flush(opened.fh).ok());
  EXPECT_EQ(client_->Data(kBucket, "small"), "hello world");
  EXPECT_EQ(client_->Calls("PutObject"), 1);
  EXPECT_EQ(client_->Calls("CreateMultipartUpload"), 0);
  fs_->Release(opened.fh);
  EXPECT_EQ(client_->Calls("PutObject"), 1);  // release after flush does not upload again
  EXPECT_EQ(ReadAll(entry.ino), "hello world");
}

TEST_F(FsReadWriteTest, EmptyCreateMakesEmptyObject) {
  Mount();
  auto c = fs_->Create(kRootIno, "empty", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  fs_->Release(c->second.fh);
  ASSERT_TRUE(client_->Exists(kBucket, "empty"));
  EXPECT_EQ(client_->Data(kBucket, "empty"), "");
}

TEST_F(FsReadWriteTest, LargeFileIsAMultipartUploadInOrder) {
  FsConfig config;
  config.write_part_size = 64 * 1024;
  Mount(config);
  const std::string data = Pattern(64 * 1024 * 5 + 1234);
  auto c = fs_->Create(kRootIno, "big", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  const uint64_t fh = c->second.fh;
  for (size_t off = 0; off < data.size(); off += 10000) {
    const size_t n = std::min<size_t>(10000, data.size() - off);
    auto w = fs_->Write(fh, off, Bytes(data.substr(off, n)));
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(*w, n);
  }
  // (Parts going out while the file is written: upload/staged_upload_test.cc.)
  ASSERT_TRUE(fs_->Flush(fh).ok());
  EXPECT_EQ(client_->Calls("UploadPart"), 6);
  EXPECT_EQ(client_->Calls("CompleteMultipartUpload"), 1);
  EXPECT_EQ(client_->Data(kBucket, "big"), data);
  EXPECT_EQ(client_->OpenUploads(), 0u);
  fs_->Release(fh);
  EXPECT_EQ(fs_->GetAttr(c->first.ino)->st_size, static_cast<off_t>(data.size()));
}

TEST_F(FsReadWriteTest, FlushKeepsTheUploadOpenUntilRelease) {
  Mount();
  // bash: open, dup2, close the original fd (flush, nothing written yet),
  // write through the duplicate, close it (flush with data).
  auto c = fs_->Create(kRootIno, "out", O_WRONLY | O_CREAT | O_TRUNC, 42);
  ASSERT_TRUE(c.ok());
  const uint64_t fh = c->second.fh;
  ASSERT_TRUE(fs_->Flush(fh, 42).ok());
  EXPECT_FALSE(client_->Exists(kBucket, "out"));
  ASSERT_TRUE(fs_->Write(fh, 0, Bytes("line\n")).ok());
  // A forked child closing its inherited copy does not end the file either.
  ASSERT_TRUE(fs_->Flush(fh, 77).ok());
  ASSERT_TRUE(fs_->Write(fh, 5, Bytes("more\n")).ok());
  ASSERT_TRUE(fs_->Flush(fh, 42).ok());
  EXPECT_EQ(client_->Data(kBucket, "out"), "line\nmore\n");
  // A close of one duplicate (a shared map holds one) leaves the others
  // writable: the release ends the upload with what they wrote since.
  ASSERT_TRUE(fs_->Write(fh, 10, Bytes("late")).ok());
  fs_->Release(fh);
  EXPECT_EQ(client_->Data(kBucket, "out"), "line\nmore\nlate");
  EXPECT_EQ(fs_->Write(fh, 14, Bytes("gone")).error().errno_value, EBADF);
}

TEST_F(FsReadWriteTest, TruncateRightAfterACloseResizesTheUploadedObject) {
  // close() returns before the kernel's release reaches the daemon: a
  // truncate that comes while the release still uploads waits for it, then
  // resizes the object (it used to fail with ENOTSUP).
  FsConfig config;
  config.allow_overwrite = true;
  Mount(config);
  auto c = fs_->Create(kRootIno, "f", O_WRONLY | O_CREAT | O_TRUNC, 42);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("0123456789")).ok());
  std::thread release = ReleaseHoldingThePut(c->second.fh);
  SetAttrRequest empty;
  empty.size = 0;
  auto truncated =
      std::async(std::launch::async, [&] { return fs_->SetAttr(c->first.ino, empty); });
  EXPECT_EQ(truncated.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  release.join();
  auto st = truncated.get();
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  EXPECT_EQ(st->st_size, 0);
  EXPECT_EQ(client_->Data(kBucket, "f"), "");
}

TEST_F(FsReadWriteTest, AnOpenRightAfterACloseWritesTheUploadedObject) {
  // An open that finds the file's writer while the release of its last
  // handle is ending it must not join it (its writes would fail with
  // EBADF): it waits, then opens the uploaded object.
  FsConfig config;
  config.allow_overwrite = true;
  Mount(config);
  auto c = fs_->Create(kRootIno, "f", O_WRONLY | O_CREAT | O_TRUNC, 42);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("0123456789")).ok());
  std::thread release = ReleaseHoldingThePut(c->second.fh);
  auto opening =
      std::async(std::launch::async, [&] { return fs_->Open(c->first.ino, O_RDWR, 42); });
  EXPECT_EQ(opening.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  client_->Release("PutObject");
  release.join();
  auto opened = opening.get();
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  ASSERT_TRUE(fs_->Write(opened->fh, 4, Bytes("ab")).ok());
  fs_->Release(opened->fh);
  EXPECT_EQ(client_->Data(kBucket, "f"), "0123ab6789");
}

TEST_F(FsReadWriteTest, FileBeingWrittenReadsAsWrittenSoFar) {
  Mount();
  auto c = fs_->Create(kRootIno, "t", O_WRONLY | O_CREAT, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(ReadAll(c->first.ino), "");
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("x")).ok());
  EXPECT_EQ(ReadAll(c->first.ino), "x");  // the bytes written so far
  fs_->Release(c->second.fh);
  EXPECT_EQ(ReadAll(c->first.ino), "x");
}

TEST_F(FsReadWriteTest, WritesAtAnyOffsetLeaveHolesOfZeros) {
  Mount();
  auto c = fs_->Create(kRootIno, "f", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("abc")).ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 10, Bytes("x")).ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 1, Bytes("B")).ok());  // back over written bytes
  fs_->Release(c->second.fh);
  EXPECT_EQ(client_->Data(kBucket, "f"), std::string("aBc\0\0\0\0\0\0\0x", 11));
}

TEST_F(FsReadWriteTest, FailedPartFailsFlushAndAbortsUpload) {
  FsConfig config;
  config.write_part_size = 1024;
  Mount(config);
  auto c = fs_->Create(kRootIno, "f", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  client_->FailNext("UploadPart", EIO);
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes(Pattern(3000))).ok());
  Status s = fs_->Flush(c->second.fh);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, EIO);
  EXPECT_FALSE(client_->Exists(kBucket, "f"));
  EXPECT_EQ(client_->OpenUploads(), 0u);
  fs_->Release(c->second.fh);
  EXPECT_EQ(fs_->Lookup(kRootIno, "f").error().errno_value, ENOENT);
}

TEST_F(FsReadWriteTest, FailedPutIsReportedByFlush) {
  Mount();
  auto c = fs_->Create(kRootIno, "f", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("abc")).ok());
  client_->FailNext("PutObject", ENOSPC);
  Status s = fs_->Flush(c->second.fh);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().errno_value, ENOSPC);
  fs_->Release(c->second.fh);
}

TEST_F(FsReadWriteTest, OverwriteNeedsTruncAndAllowOverwrite) {
  client_->Put(kBucket, "f", "old");
  Mount();
  auto e = fs_->Lookup(kRootIno, "f");
  EXPECT_EQ(fs_->Open(e->ino, O_WRONLY).error().errno_value, EPERM);
  EXPECT_EQ(fs_->Open(e->ino, O_WRONLY | O_TRUNC).error().errno_value, EPERM);
  FsConfig config;
  config.allow_overwrite = true;
  Mount(config);
  e = fs_->Lookup(kRootIno, "f");
  auto opened = fs_->Open(e->ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(fs_->GetAttr(e->ino)->st_size, 0);
  ASSERT_TRUE(fs_->Write(opened->fh, 0, Bytes("brand new")).ok());
  ASSERT_TRUE(fs_->Flush(opened->fh).ok());
  fs_->Release(opened->fh);
  EXPECT_EQ(client_->Data(kBucket, "f"), "brand new");
}

TEST_F(FsReadWriteTest, ShutdownFinishesOpenUploads) {
  Mount();
  auto c = fs_->Create(kRootIno, "pending", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes("data")).ok());
  ASSERT_TRUE(fs_->Shutdown().ok());
  EXPECT_EQ(client_->Data(kBucket, "pending"), "data");
}

TEST_F(FsReadWriteTest, ReadOnlyMountRefusesWrites) {
  client_->Put(kBucket, "f", "x");
  FsConfig config;
  config.read_only = true;
  config.allow_delete = true;
  config.allow_overwrite = true;
  Mount(config);
  auto e = fs_->Lookup(kRootIno, "f");
  EXPECT_EQ(fs_->Create(kRootIno, "n", O_WRONLY).error().errno_value, EROFS);
  EXPECT_EQ(fs_->Open(e->ino, O_WRONLY | O_TRUNC).error().errno_value, EROFS);
  EXPECT_EQ(fs_->Mkdir(kRootIno, "d").error().errno_value, EROFS);
  EXPECT_EQ(fs_->Unlink(kRootIno, "f").error().errno_value, EROFS);
  EXPECT_EQ(fs_->Rmdir(kRootIno, "d").error().errno_value, EROFS);
  EXPECT_EQ(fs_->Rename(kRootIno, "f", kRootIno, "g", 0).error().errno_value, EROFS);
  SetAttrRequest truncate;
  truncate.size = 0;
  EXPECT_EQ(fs_->SetAttr(e->ino, truncate).error().errno_value, EROFS);
  EXPECT_EQ(ReadAll(e->ino), "x");
  EXPECT_NE(fs_->StatFs().f_flag & ST_RDONLY, 0u);
}

}  // namespace
}  // namespace bucketfs::fs
