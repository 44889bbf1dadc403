#include "cache/write_fill.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <vector>

#include "cache/data_cache.h"

namespace bucketfs::cache {
namespace {

constexpr uint32_t kBlock = 4096;
constexpr uint64_t kPart = 4 * kBlock;

std::vector<std::byte> Bytes(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>((i * 13 + seed * 29 + i / 331) & 0xff);
  return v;
}

s3::ObjectVersion Version(uint64_t size, const std::string& etag = "\"e1\"") {
  return s3::ObjectVersion{"bucket", "ckpt/model.pt", etag, size};
}

std::span<const std::byte> PartOf(const std::vector<std::byte>& data, int i) {
  const uint64_t start = static_cast<uint64_t>(i) * kPart;
  return std::span(data).subspan(start, std::min<uint64_t>(kPart, data.size() - start));
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

class WriteFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/writefill-test-XXXXXX";
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
    auto c = DataCache::Open(std::move(o));
    EXPECT_TRUE(c.ok()) << c.error().ToString();
    return c.ok() ? *c : nullptr;
  }

  // The object's bytes as the cache serves them, or empty on a miss.
  static std::vector<std::byte> ReadBack(DataCache& cache, const s3::ObjectVersion& v) {
    auto f = cache.Acquire(v, /*create=*/false);
    if (f == nullptr) return {};
    std::vector<std::byte> out(v.size);
    if (!f->Read(0, out)) return {};
    return out;
  }

  std::string root_;
};

// Parts in any order (two at once from different threads in the upload),
// the last one short: published under the ETag the upload got, the whole
// object is served and is complete and verified for passthrough.
TEST_F(WriteFillTest, PublishedPartsServeTheWholeObject) {
  auto cache = Open();
  const auto data = Bytes(3 * kPart + 1000, 1);
  WriteFill fill(cache);
  for (int i : {2, 0, 3, 1}) fill.Part(i, 1, i * kPart, PartOf(data, i));
  ASSERT_TRUE(fill.Publish(Version(data.size())));
  EXPECT_EQ(ReadBack(*cache, Version(data.size())), data);
  auto f = cache->Acquire(Version(data.size()), false);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->VerifiedComplete());
  EXPECT_EQ(cache->TotalBytes(), data.size());
  EXPECT_EQ(cache->stats().filled_bytes, data.size());
}

// A part sent again after a write changed it: its later bytes are cached,
// whichever send reaches the cache first.
TEST_F(WriteFillTest, APartSentAgainKeepsItsLatestBytes) {
  auto cache = Open();
  const auto old_bytes = Bytes(2 * kPart, 1);
  auto data = old_bytes;
  for (size_t i = kPart; i < 2 * kPart; ++i)
    data[i] = static_cast<std::byte>(~static_cast<int>(data[i]));
  WriteFill fill(cache);
  fill.Part(0, 1, 0, PartOf(data, 0));
  fill.Part(1, 3, kPart, PartOf(data, 1));
  fill.Part(1, 2, kPart, PartOf(old_bytes, 1));  // an older send, late
  ASSERT_TRUE(fill.Publish(Version(data.size())));
  EXPECT_EQ(ReadBack(*cache, Version(data.size())), data);
  EXPECT_EQ(cache->TotalBytes(), data.size());
}

// Parts the upload never had (copied server side) stay absent: the rest is
// served, the record is not complete, and reads of the gap miss.
TEST_F(WriteFillTest, PartsNeverSentAreAbsent) {
  auto cache = Open();
  const auto data = Bytes(3 * kPart, 2);
  WriteFill fill(cache);
  fill.Part(0, 1, 0, PartOf(data, 0));
  fill.Part(2, 1, 2 * kPart, PartOf(data, 2));
  ASSERT_TRUE(fill.Publish(Version(data.size())));
  auto f = cache->Acquire(Version(data.size()), false);
  ASSERT_NE(f, nullptr);
  std::vector<std::byte> out(kPart);
  ASSERT_TRUE(f->Read(2 * kPart, out));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + 2 * kPart));
  EXPECT_FALSE(f->Read(kPart, out));
  EXPECT_FALSE(f->VerifiedComplete());
  EXPECT_EQ(cache->TotalBytes(), 2 * kPart);
}

// A file truncated after a part was sent: the object is shorter than what
// was cached, and a block the object now ends inside is not served from
// bytes summed over a longer run.
TEST_F(WriteFillTest, BlocksPastOrAcrossTheObjectsEndAreLeftOut) {
  auto cache = Open();
  const auto data = Bytes(2 * kPart, 3);
  WriteFill fill(cache);
  fill.Part(0, 1, 0, PartOf(data, 0));
  fill.Part(1, 1, kPart, PartOf(data, 1));
  const uint64_t size = kPart + kBlock + 100;  // ends inside block 5
  ASSERT_TRUE(fill.Publish(Version(size)));
  auto f = cache->Acquire(Version(size), false);
  ASSERT_NE(f, nullptr);
  std::vector<std::byte> out(kPart + kBlock);
  ASSERT_TRUE(f->Read(0, out));
  std::vector<std::byte> tail(100);
  EXPECT_FALSE(f->Read(kPart + kBlock, tail));
  EXPECT_EQ(cache->TotalBytes(), kPart + kBlock);
}

// Destroyed unpublished (the upload failed or was dropped): no file, no
// record, and the space reserved for it is back.
TEST_F(WriteFillTest, UnpublishedLeavesNothing) {
  auto cache = Open();
  const auto data = Bytes(2 * kPart, 4);
  {
    WriteFill fill(cache);
    fill.Part(0, 1, 0, PartOf(data, 0));
    EXPECT_EQ(cache->TotalBytes(), kPart);  // reserved while it is written
    EXPECT_EQ(FilesIn(root_ + "/data/objects"), 1u);
  }
  EXPECT_EQ(FilesIn(root_ + "/data/objects"), 0u);
  EXPECT_EQ(cache->TotalBytes(), 0u);
  EXPECT_TRUE(ReadBack(*cache, Version(data.size())).empty());
}

// No ETag (some stores give none): nothing can pin it, nothing is recorded.
TEST_F(WriteFillTest, AnObjectWithoutETagIsNotCached) {
  auto cache = Open();
  const auto data = Bytes(kPart, 5);
  {
    WriteFill fill(cache);
    fill.Part(0, 1, 0, PartOf(data, 0));
    EXPECT_FALSE(fill.Publish(Version(data.size(), "")));
  }
  EXPECT_EQ(FilesIn(root_ + "/data/objects"), 0u);
  EXPECT_EQ(cache->TotalBytes(), 0u);
}

// A write larger than the cache's limit is not cached; what the cache held
// stays within the limit and the object is read from the store.
TEST_F(WriteFillTest, AWriteLargerThanTheCacheIsNotCached) {
  auto cache = Open(/*max_bytes=*/2 * kPart);
  const auto data = Bytes(3 * kPart, 6);
  {
    WriteFill fill(cache);
    for (int i = 0; i < 3; ++i) fill.Part(i, 1, i * kPart, PartOf(data, i));
    EXPECT_FALSE(fill.Publish(Version(data.size())));
  }
  EXPECT_EQ(cache->TotalBytes(), 0u);
  EXPECT_EQ(FilesIn(root_ + "/data/objects"), 0u);
}

// Older entries are evicted to make room for a written object, as for a read.
TEST_F(WriteFillTest, EvictsOlderEntriesForRoom) {
  auto cache = Open(/*max_bytes=*/3 * kPart);
  const auto first = Bytes(2 * kPart, 7);
  {
    WriteFill fill(cache);
    for (int i = 0; i < 2; ++i) fill.Part(i, 1, i * kPart, PartOf(first, i));
    ASSERT_TRUE(fill.Publish(Version(first.size(), "\"old\"")));
  }
  const auto second = Bytes(2 * kPart, 8);
  WriteFill fill(cache);
  for (int i = 0; i < 2; ++i) fill.Part(i, 1, i * kPart, PartOf(second, i));
  ASSERT_TRUE(fill.Publish(Version(second.size(), "\"new\"")));
  EXPECT_EQ(ReadBack(*cache, Version(second.size(), "\"new\"")), second);
  EXPECT_TRUE(ReadBack(*cache, Version(first.size(), "\"old\"")).empty());
  EXPECT_LE(cache->TotalBytes(), 3 * kPart);
}

// The cache holds the version already (the same bytes written twice give
// the same ETag): the entry that readers may have pinned stays, ours goes.
TEST_F(WriteFillTest, AVersionAlreadyCachedKeepsItsEntry) {
  auto cache = Open();
  const auto data = Bytes(kPart, 9);
  for (int round = 0; round < 2; ++round) {
    WriteFill fill(cache);
    fill.Part(0, 1, 0, PartOf(data, 0));
    EXPECT_EQ(fill.Publish(Version(data.size())), round == 0);
  }
  EXPECT_EQ(FilesIn(root_ + "/data/objects"), 1u);
  EXPECT_EQ(cache->TotalBytes(), data.size());
  EXPECT_EQ(ReadBack(*cache, Version(data.size())), data);
}

// A corrupted byte in a written entry is caught by its block's checksum and
// never served, as for a read fill.
TEST_F(WriteFillTest, ACorruptedWrittenBlockIsNotServed) {
  auto cache = Open();
  const auto data = Bytes(kPart, 10);
  WriteFill fill(cache);
  fill.Part(0, 1, 0, PartOf(data, 0));
  ASSERT_TRUE(fill.Publish(Version(data.size())));
  std::string path;
  {
    auto f = cache->Acquire(Version(data.size()), false);
    ASSERT_NE(f, nullptr);
    path = f->path();
  }
  FILE* fp = std::fopen(path.c_str(), "r+");
  ASSERT_NE(fp, nullptr);
  std::fseek(fp, 5, SEEK_SET);
  std::fputc(~static_cast<int>(data[5]) & 0xff, fp);
  std::fclose(fp);
  EXPECT_TRUE(ReadBack(*cache, Version(data.size())).empty());
  EXPECT_EQ(cache->stats().bad_blocks, 1u);
}

}  // namespace
}  // namespace bucketfs::cache
