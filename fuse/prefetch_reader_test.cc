// Reads through the prefetcher-backed readers, over the fake client.
#include "fuse/prefetch_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <span>

#include "cache/data_cache.h"
#include "fuse/testing/fs_test_util.h"
#include "prefetch/object_client_range_source.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class PrefetchReaderTest : public FsTest {
 protected:
  void MountWithPrefetch() {
    prefetch::PrefetchConfig pc;
    pc.part_size = 64 * 1024;
    pc.initial_window = 16 * 1024;
    pc.small_object_threshold = 1024;
    auto prefetcher = std::make_shared<prefetch::Prefetcher>(
        pc, std::make_shared<prefetch::ObjectClientRangeSource>(client_));
    FsConfig config;
    config.bucket = kBucket;
    fs_ = std::make_unique<Filesystem>(client_, config,
                                       FsComponents{MakePrefetchReaderFactory(prefetcher),
                                                    MakeStagedWriterFactory(client_, config)});
  }

  // Reads the whole file with ServeRead in `chunk` steps, gathering segments.
  std::string ReadAllAsync(Ino ino, size_t chunk) {
    auto opened = fs_->Open(ino, O_RDONLY);
    EXPECT_TRUE(opened.ok());
    std::string out;
    for (;;) {
      bool called = false, failed = false;
      size_t got = 0;
      fs_->ServeRead(opened->fh, out.size(), chunk,
                     [&](const Error* e, std::span<const std::span<const std::byte>> data) {
                       called = true;
                       failed = e != nullptr;
                       for (const auto& seg : data) {
                         out.append(reinterpret_cast<const char*>(seg.data()), seg.size());
                         got += seg.size();
                       }
                     });
      EXPECT_TRUE(called);  // the fake completes inline
      if (failed || got == 0) break;
    }
    fs_->Release(opened->fh);
    return out;
  }
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + i / 251) & 0xff);
  return s;
}

TEST_F(PrefetchReaderTest, SequentialAndBlockingReadsMatch) {
  const std::string data = Pattern(1000000);
  client_->Put(kBucket, "f", data);
  MountWithPrefetch();
  auto e = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(ReadAllAsync(e->ino, 131072), data);
  EXPECT_EQ(ReadAll(e->ino, 100000), data);
}

TEST_F(PrefetchReaderTest, DirectReaderAsyncMatches) {
  const std::string data = Pattern(300000);
  client_->Put(kBucket, "f", data);
  Mount();
  auto e = fs_->Lookup(kRootIno, "f");
  EXPECT_EQ(ReadAllAsync(e->ino, 65536), data);
}

TEST_F(PrefetchReaderTest, OpeningFilesInListingOrderHintsTheirSiblings) {
  for (int i = 0; i < 6; ++i) client_->Put(kBucket, "s" + std::to_string(i), Pattern(500 + i));
  MountWithPrefetch();
  ListDir(kRootIno, true);  // the listing the hints come from
  auto first = fs_->Lookup(kRootIno, "s0");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(ReadAll(first->ino), Pattern(500));  // one open says nothing of the order
  auto e = fs_->Lookup(kRootIno, "s1");
  ASSERT_TRUE(e.ok());
  const int gets_before = client_->Calls("GetObject");
  auto opened = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(opened.ok());
  fs_->Release(opened->fh);
  EXPECT_EQ(client_->Calls("GetObject") - gets_before, 4);  // s2..s5 fetched ahead
  auto s3 = fs_->Lookup(kRootIno, "s3");
  EXPECT_EQ(ReadAll(s3->ino), Pattern(503));
  EXPECT_EQ(client_->Calls("GetObject") - gets_before, 4);  // served from the hint
}

TEST_F(PrefetchReaderTest, OpensInShuffledOrderFetchNoSiblings) {
  for (int i = 0; i < 40; ++i)
    client_->Put(kBucket, "s" + std::to_string(10 + i), Pattern(500 + i));
  MountWithPrefetch();
  ListDir(kRootIno, true);
  const int gets_before = client_->Calls("GetObject");
  for (int i : {30, 12, 45, 21, 39}) {
    auto e = fs_->Lookup(kRootIno, "s" + std::to_string(i));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(ReadAll(e->ino), Pattern(500 + i - 10));
  }
  EXPECT_EQ(client_->Calls("GetObject") - gets_before, 5);  // the files read, nothing more
}

TEST_F(PrefetchReaderTest, ChangedObjectIsAnError) {
  client_->Put(kBucket, "f", Pattern(200000));
  MountWithPrefetch();
  auto e = fs_->Lookup(kRootIno, "f");
  auto opened = fs_->Open(e->ino, O_RDONLY);
  ASSERT_TRUE(opened.ok());
  client_->Put(kBucket, "f", Pattern(200001));
  std::vector<std::byte> buf(4096);
  auto r = fs_->Read(opened->fh, 0, buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errno_value, EIO);
  fs_->Release(opened->fh);
}

// The data cache file of an open object stays while it is open: eviction
// skips it (between reads too, not only during a fetch), and takes it once
// the file is closed.
TEST_F(PrefetchReaderTest, AnOpenFileKeepsItsCacheFileFromEviction) {
  char tmpl[] = "/tmp/prefetch-reader-pin-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  cache::DataCacheOptions o;
  o.dir = root + "/data";
  o.max_bytes = 1 << 20;
  o.block_size = 64 << 10;
  auto cache = cache::DataCache::Open(o);
  ASSERT_TRUE(cache.ok());
  const std::string data = Pattern(64 << 10);
  client_->Put(kBucket, "f", data);
  auto head = client_->HeadObject({kBucket, "f", {}, {}});
  ASSERT_TRUE(head.ok());
  const prefetch::ObjectVersion v{kBucket, "f", head->etag, data.size()};
  auto prefetcher = std::make_shared<prefetch::Prefetcher>(
      prefetch::PrefetchConfig{}, std::make_shared<prefetch::ObjectClientRangeSource>(client_));
  auto factory = MakePrefetchReaderFactory(prefetcher, 0, *cache);
  auto reader = factory->Open(v);
  {
    auto file = (*cache)->Acquire(v, /*create=*/false);
    ASSERT_NE(file, nullptr);  // the open made it
    file->Fill(0, std::as_bytes(std::span(data)));
  }
  EXPECT_EQ((*cache)->EvictTo(0), 0u);
  EXPECT_EQ((*cache)->TotalBytes(), data.size());
  reader.reset();
  EXPECT_EQ((*cache)->EvictTo(0), data.size());
  EXPECT_EQ((*cache)->TotalBytes(), 0u);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace bucketfs::fs
