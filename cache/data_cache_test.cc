#include "cache/data_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <vector>

#include "s3/crc32c.h"

namespace bucketfs::cache {
namespace {

constexpr int64_t kSec = 1000000000;
constexpr uint32_t kBlock = 4096;

std::vector<std::byte> Bytes(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>((i * 31 + seed * 7 + i / 977) & 0xff);
  return v;
}

s3::ObjectVersion Version(const std::string& key, uint64_t size, const std::string& etag = "e1") {
  return s3::ObjectVersion{"bucket", key, etag, size};
}

class DataCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/datacache-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::shared_ptr<DataCache> Open(uint64_t max_bytes = 1 << 20) {
    DataCacheOptions o;
    o.dir = root_ + "/data";
    o.scope = "http://s3.test";
    o.max_bytes = max_bytes;
    o.block_size = kBlock;
    o.clock = [this] { return now_.load(); };
    auto c = DataCache::Open(std::move(o));
    EXPECT_TRUE(c.ok()) << c.error().ToString();
    return c.ok() ? *c : nullptr;
  }

  // Overwrites one byte of `path` at `offset` (a disk error, or a user).
  static void Corrupt(const std::string& path, uint64_t offset) {
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char byte = 0;
    ASSERT_EQ(::pread(fd, &byte, 1, static_cast<off_t>(offset)), 1);
    byte = static_cast<char>(~byte);
    ASSERT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(offset)), 1);
    ::close(fd);
  }

  std::string root_;
  std::atomic<int64_t> now_{1000 * kSec};
};

// A copy for a fill sums each block it covers whole, exactly as a Fill of
// those bytes would; a Fill given those sums serves the same bytes.
TEST_F(DataCacheTest, CopyForFillCopiesAndSumsTheBlocksAFillWrites) {
  auto cache = Open();
  const auto data = Bytes(10 * kBlock + 123, 2);
  auto f = cache->Acquire(Version("a", data.size()), true);
  ASSERT_NE(f, nullptr);
  // From mid-block 1 to the object's short last block: blocks 2 to 10 whole.
  const uint64_t offset = kBlock + 100;
  const std::span<const std::byte> src(data.data() + offset, data.size() - offset);
  std::vector<std::byte> copy(src.size());
  const auto sums = f->CopyForFill(offset, src, copy);
  EXPECT_TRUE(std::equal(copy.begin(), copy.end(), src.begin()));
  EXPECT_EQ(sums.first_block, 2u);
  EXPECT_EQ(sums.block_size, kBlock);
  ASSERT_EQ(sums.crcs.size(), 9u);
  for (size_t k = 0; k < sums.crcs.size(); ++k) {
    const uint64_t b = (2 + k) * kBlock, e = std::min<uint64_t>(b + kBlock, data.size());
    EXPECT_EQ(sums.crcs[k], s3::Crc32c(std::span(data.data() + b, e - b))) << "block " << 2 + k;
  }
  f->Fill(offset, copy, &sums);
  std::vector<std::byte> out(data.size() - 2 * kBlock);
  ASSERT_TRUE(f->Read(2 * kBlock, out));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + 2 * kBlock));
  std::vector<std::byte> first(kBlock);
  EXPECT_FALSE(f->Read(kBlock, first));  // block 1 was not whole in the copy
}

// Sums of another block size (a record made before a change of it) are not
// taken for this file's blocks.
TEST_F(DataCacheTest, FillIgnoresSumsOfAnotherBlockSize) {
  auto cache = Open();
  const auto data = Bytes(4 * kBlock, 3);
  auto f = cache->Acquire(Version("a", data.size()), true);
  ASSERT_NE(f, nullptr);
  CachedFile::BlockSums wrong{0, kBlock * 2, {1, 2}};
  f->Fill(0, data, &wrong);
  std::vector<std::byte> out(data.size());
  ASSERT_TRUE(f->Read(0, out));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin()));
}

TEST_F(DataCacheTest, FillThenReadReturnsTheSameBytesAcrossBlockEdges) {
  auto cache = Open();
  const auto data = Bytes(10 * kBlock + 123, 1);
  auto f = cache->Acquire(Version("a", data.size()), true);
  ASSERT_NE(f, nullptr);
  std::vector<std::byte> out(3 * kBlock);
  EXPECT_FALSE(f->Read(kBlock, out));  // nothing yet
  f->Fill(0, data);
  // Unaligned read crossing three blocks, and the short last block.
  std::vector<std::byte> mid(2 * kBlock + 100);
  ASSERT_TRUE(f->Read(kBlock + 7, mid));
  EXPECT_TRUE(std::equal(mid.begin(), mid.end(), data.begin() + kBlock + 7));
  std::vector<std::byte> tail(123 + 10);
  ASSERT_TRUE(f->Read(data.size() - tail.size(), tail));
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), data.end() - static_cast<long>(tail.size())));
  EXPECT_EQ(cache->TotalBytes(), data.size());
  EXPECT_EQ(cache->stats().hits, 2u);
  // The file is the object's size, 0600, in a 0700 directory.
  struct stat st {};
  ASSERT_EQ(::stat(f->path().c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), data.size());
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(cache->objects_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(DataCacheTest, OnlyWholeBlocksOfAFillAreRecorded) {
  auto cache = Open();
  const auto data = Bytes(4 * kBlock, 2);
  auto f = cache->Acquire(Version("a", data.size()), true);
  // Bytes [100, 3 * kBlock + 5): blocks 1 and 2 are whole, 0 and 3 are not.
  f->Fill(100, std::span(data).subspan(100, 3 * kBlock - 95));
  std::vector<std::byte> b(kBlock);
  EXPECT_FALSE(f->Read(0, b));
  EXPECT_TRUE(f->Read(kBlock, b));
  EXPECT_TRUE(f->Read(2 * kBlock, b));
  EXPECT_FALSE(f->Read(3 * kBlock, b));
  EXPECT_EQ(cache->TotalBytes(), 2u * kBlock);
}

TEST_F(DataCacheTest, ACorruptedBlockIsNeverServedAndIsDroppedUntilRefilled) {
  auto cache = Open();
  const auto data = Bytes(4 * kBlock, 3);
  auto f = cache->Acquire(Version("a", data.size()), true);
  f->Fill(0, data);
  ASSERT_TRUE(f->VerifiedComplete());
  Corrupt(f->path(), 2 * kBlock + 10);
  std::vector<std::byte> out(data.size());
  EXPECT_FALSE(f->Read(0, out));
  EXPECT_EQ(cache->stats().bad_blocks, 1u);
  EXPECT_EQ(cache->TotalBytes(), 3u * kBlock);
  EXPECT_FALSE(f->VerifiedComplete());  // no longer complete: never handed to the kernel
  std::vector<std::byte> other(kBlock);
  EXPECT_TRUE(f->Read(0, other));  // good blocks still serve
  f->Fill(0, data);                // the caller fetched it again
  ASSERT_TRUE(f->Read(0, out));
  EXPECT_EQ(out, data);
  EXPECT_TRUE(f->VerifiedComplete());
}

TEST_F(DataCacheTest, AFileWrittenSinceVerifiedIsVerifiedAgainBeforePassthrough) {
  auto cache = Open();
  const auto data = Bytes(3 * kBlock, 4);
  auto f = cache->Acquire(Version("a", data.size()), true);
  f->Fill(0, data);
  ASSERT_TRUE(f->VerifiedComplete());
  const uint64_t verified = cache->stats().verified_files;
  EXPECT_TRUE(f->VerifiedComplete());  // stamp unchanged: no second pass
  EXPECT_EQ(cache->stats().verified_files, verified);
  Corrupt(f->path(), 5);
  EXPECT_FALSE(f->VerifiedComplete());
  EXPECT_EQ(cache->stats().bad_blocks, 1u);
}

TEST_F(DataCacheTest, VersionsAreSeparateEntries) {
  auto cache = Open();
  const auto v1 = Bytes(2 * kBlock, 5), v2 = Bytes(2 * kBlock, 6);
  cache->Acquire(Version("a", v1.size(), "e1"), true)->Fill(0, v1);
  auto f2 = cache->Acquire(Version("a", v2.size(), "e2"), true);
  std::vector<std::byte> out(v2.size());
  EXPECT_FALSE(f2->Read(0, out));  // a new ETag never sees the old bytes
  f2->Fill(0, v2);
  ASSERT_TRUE(f2->Read(0, out));
  EXPECT_EQ(out, v2);
  ASSERT_TRUE(cache->Acquire(Version("a", v1.size(), "e1"), false)->Read(0, out));
  EXPECT_EQ(out, v1);
  EXPECT_EQ(cache->Acquire(Version("a", 10, ""), true), nullptr);  // no ETag: not cached
  EXPECT_EQ(cache->Acquire(Version("b", 10), false), nullptr);     // absent
}

TEST_F(DataCacheTest, EvictionKeepsTheLimitAndSkipsPinnedFiles) {
  auto cache = Open(8 * kBlock);
  const auto data = Bytes(3 * kBlock, 7);
  auto pinned = cache->Acquire(Version("pinned", data.size()), true);
  pinned->Fill(0, data);
  for (int i = 0; i < 6; ++i) {
    now_ += 10 * kSec;
    auto f = cache->Acquire(Version("f" + std::to_string(i), data.size()), true);
    f->Fill(0, data);
    EXPECT_LE(cache->TotalBytes(), 8u * kBlock);
    std::vector<std::byte> out(data.size());
    EXPECT_TRUE(f->Read(0, out)) << i;  // the newest is kept
  }
  EXPECT_GT(cache->stats().evicted_files, 0u);
  std::vector<std::byte> out(data.size());
  EXPECT_TRUE(pinned->Read(0, out));  // the oldest, but in use
  // Evicted files are gone from disk (their space comes back).
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(cache->objects_dir())) {
    ++files;
  }
  EXPECT_LE(files, 3u);
  pinned.reset();
  cache->EvictTo(0);
  EXPECT_EQ(cache->TotalBytes(), 0u);
}

TEST_F(DataCacheTest, ReopenKeepsEntriesAndRemovesUnlistedFiles) {
  const auto data = Bytes(2 * kBlock, 8);
  std::string stray;
  {
    auto cache = Open();
    cache->Acquire(Version("a", data.size()), true)->Fill(0, data);
    stray = cache->objects_dir() + "/stray";
    ASSERT_EQ(::close(::open(stray.c_str(), O_CREAT | O_WRONLY, 0600)), 0);
    // Left by a process that died long ago (a fresh one may be another's).
    const timespec old[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, stray.c_str(), old, 0), 0);
  }
  now_ += 3600 * kSec;
  auto cache = Open();
  EXPECT_EQ(cache->TotalBytes(), data.size());
  auto f = cache->Acquire(Version("a", data.size()), false);
  ASSERT_NE(f, nullptr);
  std::vector<std::byte> out(data.size());
  ASSERT_TRUE(f->Read(0, out));
  EXPECT_EQ(out, data);
  EXPECT_FALSE(std::filesystem::exists(stray));
}

TEST_F(DataCacheTest, AMissingFileIsAMissAndIsRecreated) {
  auto cache = Open();
  const auto data = Bytes(2 * kBlock, 9);
  std::string path;
  {
    auto f = cache->Acquire(Version("a", data.size()), true);
    f->Fill(0, data);
    path = f->path();
  }
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_EQ(cache->Acquire(Version("a", data.size()), false), nullptr);  // no passthrough
  auto f = cache->Acquire(Version("a", data.size()), true);
  ASSERT_NE(f, nullptr);
  std::vector<std::byte> out(data.size());
  EXPECT_FALSE(f->Read(0, out));  // zeros fail their checksums: refetched
  f->Fill(0, data);
  ASSERT_TRUE(f->Read(0, out));
  EXPECT_EQ(out, data);
}

TEST_F(DataCacheTest, AnotherProcessSharesTheIndexAndTheLimit) {
  auto cache = Open(6 * kBlock);
  const auto data = Bytes(3 * kBlock, 10);
  auto mine = cache->Acquire(Version("mine", data.size()), true);
  mine->Fill(0, data);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child opens its own environment (as another mount would), fills
    // two objects under the shared limit: it must evict, never "mine".
    DataCacheOptions o;
    o.dir = root_ + "/data";
    o.scope = "http://s3.test";
    o.max_bytes = 6 * kBlock;
    o.block_size = kBlock;
    auto child = DataCache::Open(o);
    if (!child.ok()) ::_exit(2);
    for (const char* k : {"c1", "c2"}) {
      auto f = (*child)->Acquire(Version(k, data.size()), true);
      if (f == nullptr) ::_exit(3);
      f->Fill(0, data);
    }
    ::_exit((*child)->TotalBytes() <= 6 * kBlock ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::vector<std::byte> out(data.size());
  EXPECT_TRUE(mine->Read(0, out));  // pinned here, so the child could not evict it
  EXPECT_EQ(out, data);
  EXPECT_LE(cache->TotalBytes(), 6u * kBlock);
}

TEST_F(DataCacheTest, TheLastProcessToOpenTheCacheSetsEveryonesLimit) {
  auto cache = Open(6 * kBlock);
  EXPECT_EQ(cache->limit(), 6u * kBlock);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // another mount of the same directory, with a smaller limit
    DataCacheOptions o;
    o.dir = root_ + "/data";
    o.scope = "http://s3.test";
    o.max_bytes = 4 * kBlock;
    o.block_size = kBlock;
    auto child = DataCache::Open(o);
    ::_exit(child.ok() && (*child)->limit() == 4 * kBlock ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(cache->limit(), 4u * kBlock);
  const auto data = Bytes(2 * kBlock, 11);
  for (const char* k : {"a", "b", "c"}) {
    auto f = cache->Acquire(Version(k, data.size()), true);
    ASSERT_NE(f, nullptr);
    f->Fill(0, data);
  }
  EXPECT_LE(cache->TotalBytes(), 4u * kBlock);
}

}  // namespace
}  // namespace bucketfs::cache
