// StagedUpload with a data cache in its context: what it sends is cached
// under the object's new ETag (cache/write_fill.h), exactly as the store
// holds it, and nothing is cached when the upload fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cache/data_cache.h"
#include "upload/staged_upload.h"
#include "upload/testing/staged_upload_fixture.h"

namespace bucketfs::upload {
namespace {

using testing::Bytes;
using testing::Pattern;
using testing::StagedUploadTest;

constexpr uint32_t kBlock = 256;  // parts of 1,024 bytes hold 4 blocks

class StagedUploadCacheTest : public StagedUploadTest {
 protected:
  StagedUploadCacheTest() {
    cache::DataCacheOptions o;
    o.dir = (dir_ / "data").string();
    o.scope = "fake";
    o.max_bytes = 1 << 20;
    o.block_size = kBlock;
    auto c = cache::DataCache::Open(std::move(o));
    EXPECT_TRUE(c.ok());
    if (c.ok()) cache_ = *c;
    ctx_.data_cache = cache_;
  }

  s3::ObjectVersion Stored(const std::string& key) {
    auto head = client_->HeadObject({kBucket, key, "", ""});
    EXPECT_TRUE(head.ok());
    return s3::ObjectVersion{kBucket, key, head.ok() ? head->etag : "", head.ok() ? head->size : 0};
  }

  // The blocks of `v` the cache serves, compared with the store's bytes;
  // returns how many bytes it served.
  uint64_t ExpectCachedMatchesStore(const s3::ObjectVersion& v) {
    auto f = cache_->Acquire(v, /*create=*/false);
    if (f == nullptr) return 0;
    const std::string stored = client_->Data(kBucket, v.key);
    uint64_t served = 0;
    for (uint64_t at = 0; at < v.size; at += kBlock) {
      std::string block(std::min<uint64_t>(kBlock, v.size - at), '\0');
      if (!f->Read(at, std::as_writable_bytes(std::span(block.data(), block.size())))) continue;
      EXPECT_EQ(block, stored.substr(at, block.size())) << "block at " << at;
      served += block.size();
    }
    return served;
  }

  size_t CacheFiles() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e :
         std::filesystem::directory_iterator(dir_ / "data/objects"))
      ++n;
    return n;
  }

  std::shared_ptr<cache::DataCache> cache_;
};

// Streamed parts, then a part rewritten after it went out (sent again): the
// whole object is cached, as the store holds it, complete for passthrough.
TEST_F(StagedUploadCacheTest, AMultipartUploadIsCachedAsTheStoreHoldsIt) {
  auto w = Make("big");
  const std::string data = Pattern(5 * 1024 + 100);
  for (size_t off = 0; off < data.size(); off += 512) {
    ASSERT_TRUE(w->Write(off, Bytes(data.substr(off, 512))).ok());
  }
  const std::string patch = Pattern(300, 7);
  ASSERT_TRUE(w->Write(1100, Bytes(patch)).ok());  // inside part 2, already sent
  ASSERT_TRUE(w->Commit().ok());
  const auto v = Stored("big");
  ASSERT_EQ(v.size, data.size());
  EXPECT_EQ(ExpectCachedMatchesStore(v), v.size);
  auto f = cache_->Acquire(v, false);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->VerifiedComplete());
  EXPECT_EQ(cache_->TotalBytes(), v.size);
}

TEST_F(StagedUploadCacheTest, ASmallFileIsCached) {
  auto w = Make("small");
  ASSERT_TRUE(w->Write(0, Bytes("hello, cache")).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(client_->Calls("PutObject"), 1);
  EXPECT_EQ(ExpectCachedMatchesStore(Stored("small")), 12u);
}

// A file cut short below its first part after parts went out is one
// PutObject: the cache holds those bytes, not the dropped parts'.
TEST_F(StagedUploadCacheTest, ATruncatedFileIsCachedAsItsPutObject) {
  auto w = Make("cut");
  const std::string data = Pattern(3 * 1024);
  ASSERT_TRUE(w->Write(0, Bytes(data)).ok());
  ASSERT_TRUE(w->Truncate(700).ok());
  ASSERT_TRUE(w->Commit().ok());
  const auto v = Stored("cut");
  ASSERT_EQ(v.size, 700u);
  EXPECT_EQ(ExpectCachedMatchesStore(v), 700u);
  EXPECT_EQ(cache_->TotalBytes(), 700u);
}

// A failed upload leaves no cache file and no reserved space.
TEST_F(StagedUploadCacheTest, AFailedUploadCachesNothing) {
  {
    auto w = Make("fails");
    ASSERT_TRUE(w->Write(0, Bytes(Pattern(3 * 1024))).ok());
    client_->FailNext("CompleteMultipartUpload", EIO);
    EXPECT_FALSE(w->Commit().ok());
  }
  EXPECT_EQ(CacheFiles(), 0u);
  EXPECT_EQ(cache_->TotalBytes(), 0u);
}

// Over a base object, parts copied server side were never local: the parts
// the writes changed are cached, the copied ones are fetched when read.
TEST_F(StagedUploadCacheTest, OverABaseOnlyTheChangedPartsAreCached) {
  const std::string base = Pattern(4 * 1024, 3);
  auto w = MakeOver("over", base);
  const std::string patch = Pattern(1024, 9);
  ASSERT_TRUE(w->Write(1024, Bytes(patch)).ok());  // all of part 2
  ASSERT_TRUE(w->Commit().ok());
  const auto v = Stored("over");
  ASSERT_EQ(v.size, base.size());
  // Parts this small can be copied only as the last one (S3's 5 MiB minimum
  // for the others): parts 1 and 3 are fetched, staged and sent, part 4 copied.
  EXPECT_EQ(client_->Calls("UploadPartCopy"), 1);
  EXPECT_EQ(ExpectCachedMatchesStore(v), 3 * 1024u);
  auto f = cache_->Acquire(v, false);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->VerifiedComplete());
}

}  // namespace
}  // namespace bucketfs::upload
