#include "cache/metadata_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>

namespace bucketfs::cache {
namespace {

constexpr int64_t kSec = 1000000000;

std::string Numbered(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

class MetadataCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/metacache-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    now_ = 1000 * kSec;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  MetadataCacheOptions Options(double ttl = 10, double negative_ttl = 5) {
    MetadataCacheOptions o;
    o.dir = root_ + "/metadata";
    o.scope = "http://127.0.0.1:9000";
    o.ttl_seconds = ttl;
    o.negative_ttl_seconds = negative_ttl;
    o.clock = [this] { return now_.load(); };
    return o;
  }
  std::unique_ptr<MetadataCache> OpenCache(double ttl = 10, double negative_ttl = 5) {
    auto c = MetadataCache::Open(Options(ttl, negative_ttl));
    EXPECT_TRUE(c.ok()) << c.error().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }
  static CachedName File(uint64_t size, std::string etag) {
    return CachedName{NameKind::kFile, size, 42 * kSec, std::move(etag), 0};
  }
  static CachedListing Listing() {
    CachedListing l;
    l.entries.push_back({"a.txt", false, 3, 7 * kSec, "\"e1\""});
    l.entries.push_back({"sub", true, 0, 0, ""});
    return l;
  }

  std::string root_;
  std::atomic<int64_t> now_{0};
};

TEST_F(MetadataCacheTest, NameIsFreshWithinTtlOnly) {
  auto c = OpenCache(10, 5);
  ASSERT_TRUE(c->PutName("b", "dir/a.txt", File(3, "\"e1\"")).ok());
  auto n = c->GetName("b", "dir/a.txt");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->kind, NameKind::kFile);
  EXPECT_EQ(n->size, 3u);
  EXPECT_EQ(n->mtime_ns, 42 * kSec);
  EXPECT_EQ(n->etag, "\"e1\"");
  EXPECT_EQ(n->fetched_at_ns, 1000 * kSec);
  now_ += 9 * kSec;
  EXPECT_TRUE(c->GetName("b", "dir/a.txt"));
  now_ += 1 * kSec;  // exactly the TTL: stale
  EXPECT_FALSE(c->GetName("b", "dir/a.txt"));
  // Other buckets and keys never match.
  EXPECT_FALSE(c->GetName("c", "dir/a.txt"));
  EXPECT_FALSE(c->GetName("b", "dir/a.tx"));
}

TEST_F(MetadataCacheTest, NegativeEntriesUseTheirOwnTtl) {
  auto c = OpenCache(10, 2);
  ASSERT_TRUE(c->PutMissing("b", "nope").ok());
  auto n = c->GetName("b", "nope");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->kind, NameKind::kMissing);
  now_ += 2 * kSec;
  EXPECT_FALSE(c->GetName("b", "nope"));
}

TEST_F(MetadataCacheTest, NegativeTtlZeroStoresNothing) {
  auto c = OpenCache(10, 0);
  ASSERT_TRUE(c->PutMissing("b", "nope").ok());
  EXPECT_FALSE(c->GetName("b", "nope"));
}

TEST_F(MetadataCacheTest, IndefiniteNeverExpires) {
  auto c = OpenCache(kIndefiniteTtl, kIndefiniteTtl);
  ASSERT_TRUE(c->PutName("b", "x", File(1, "e")).ok());
  ASSERT_TRUE(c->PutMissing("b", "y").ok());
  ASSERT_TRUE(c->PutListing("b", "", Listing()).ok());
  now_ += 100LL * 365 * 24 * 3600 * kSec;
  EXPECT_TRUE(c->GetName("b", "x"));
  EXPECT_TRUE(c->GetName("b", "y"));
  EXPECT_TRUE(c->GetListing("b", ""));
}

TEST_F(MetadataCacheTest, ListingRoundTripsAndAnswersNames) {
  auto c = OpenCache();
  ASSERT_TRUE(c->PutListing("b", "dir/", Listing()).ok());
  auto l = c->GetListing("b", "dir/");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->entries.size(), 2u);
  EXPECT_EQ(l->entries[0].name, "a.txt");
  EXPECT_EQ(l->entries[0].etag, "\"e1\"");
  EXPECT_EQ(l->entries[0].mtime_ns, 7 * kSec);
  EXPECT_TRUE(l->entries[1].is_dir);
  EXPECT_TRUE(l->complete);

  auto a = c->GetNameFromListing("b", "dir/a.txt");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, NameKind::kFile);
  EXPECT_EQ(a->size, 3u);
  EXPECT_EQ(a->etag, "\"e1\"");
  EXPECT_EQ(a->mtime_ns, 7 * kSec);
  EXPECT_EQ(c->GetNameFromListing("b", "dir/sub")->kind, NameKind::kDir);
  EXPECT_EQ(c->GetNameFromListing("b", "dir/zzz")->kind, NameKind::kMissing);
  EXPECT_FALSE(c->GetNameFromListing("b", "other/a.txt"));  // no listing of other/

  CachedListing partial = Listing();
  partial.complete = false;
  ASSERT_TRUE(c->PutListing("b", "p/", partial).ok());
  EXPECT_FALSE(c->GetListing("b", "p/"));  // only complete listings are served
  EXPECT_FALSE(c->GetNameFromListing("b", "p/a.txt"));
  EXPECT_FALSE(c->GetNameFromListing("b", "p/zzz"));
  now_ += 10 * kSec;
  EXPECT_FALSE(c->GetListing("b", "dir/"));
  EXPECT_FALSE(c->GetNameFromListing("b", "dir/a.txt"));  // stale
  EXPECT_FALSE(c->GetNameFromListing("b", "dir/zzz"));
}

TEST_F(MetadataCacheTest, InvalidateDropsNameAndParentListing) {
  auto c = OpenCache();
  ASSERT_TRUE(c->PutListing("b", "dir/", Listing()).ok());
  ASSERT_TRUE(c->PutListing("b", "dir/sub/", Listing()).ok());
  ASSERT_TRUE(c->PutName("b", "dir/a.txt", File(3, "e")).ok());
  ASSERT_TRUE(c->PutMissing("b", "dir/new").ok());
  ASSERT_TRUE(c->PutListing("b", "", Listing()).ok());

  ASSERT_TRUE(c->Invalidate("b", "dir/new").ok());  // create of dir/new
  EXPECT_FALSE(c->GetName("b", "dir/new"));
  EXPECT_FALSE(c->GetListing("b", "dir/"));
  EXPECT_TRUE(c->GetName("b", "dir/a.txt"));
  EXPECT_TRUE(c->GetListing("b", "dir/sub/"));
  EXPECT_TRUE(c->GetListing("b", ""));

  ASSERT_TRUE(c->InvalidateTree("b", "dir/").ok());  // rmdir / rename of dir
  EXPECT_FALSE(c->GetName("b", "dir/a.txt"));
  EXPECT_FALSE(c->GetListing("b", "dir/sub/"));
  EXPECT_FALSE(c->GetListing("b", ""));  // the parent of dir/
}

TEST_F(MetadataCacheTest, OverlongKeysAreNotCached) {
  auto c = OpenCache();
  const std::string key(600, 'k');
  ASSERT_TRUE(c->PutName("b", key, File(1, "e")).ok());
  EXPECT_FALSE(c->GetName("b", key));
  EXPECT_TRUE(c->Invalidate("b", key).ok());
  EXPECT_TRUE(c->InvalidateTree("b", key + "/").ok());
}

TEST_F(MetadataCacheTest, ReopenKeepsRecords) {
  {
    auto c = OpenCache();
    ASSERT_TRUE(c->PutName("b", "k", File(9, "e9")).ok());
    ASSERT_TRUE(c->PutListing("b", "", Listing()).ok());
  }
  struct stat st {};
  ASSERT_EQ(::stat((root_ + "/metadata").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto c = OpenCache();
  ASSERT_TRUE(c->GetName("b", "k"));
  EXPECT_EQ(c->GetName("b", "k")->size, 9u);
  EXPECT_TRUE(c->GetListing("b", ""));
}

TEST_F(MetadataCacheTest, ScopesDoNotMix) {
  auto c = OpenCache();
  ASSERT_TRUE(c->PutName("b", "k", File(9, "e9")).ok());
  c.reset();
  auto o = Options();
  o.scope = "http://other:9000";
  auto other = MetadataCache::Open(o);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE((*other)->GetName("b", "k"));
}

TEST_F(MetadataCacheTest, VersionMismatchRebuilds) {
  {
    auto env = LmdbEnv::Open(root_ + "/metadata", LmdbOptions{});
    ASSERT_TRUE(env.ok());
    ASSERT_TRUE((*env)
                    ->Write([](LmdbTxn& t) -> Status {
                      if (Status s = t.Put(std::string_view("\x01version", 8), "bucketfs-old");
                          !s.ok())
                        return s;
                      return t.Put("Nstale", "garbage");
                    })
                    .ok());
  }
  auto c = OpenCache();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->PutName("b", "k", File(1, "e")).ok());
  EXPECT_TRUE(c->GetName("b", "k"));
  c.reset();
  auto env = LmdbEnv::Open(root_ + "/metadata", LmdbOptions{});
  ASSERT_TRUE(env.ok());
  std::optional<std::string> stale, version;
  ASSERT_TRUE((*env)
                  ->Read([&](LmdbTxn& t) -> Status {
                    stale = *t.Get("Nstale");
                    version = *t.Get(std::string_view("\x01version", 8));
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_FALSE(stale);  // the old file was dropped, not trusted
  EXPECT_EQ(version, std::string(kMetadataFormat));
}

TEST_F(MetadataCacheTest, TruncatedDataFileRebuilds) {
  {
    auto c = OpenCache();
    CachedListing big;
    for (int i = 0; i < 20000; ++i) big.entries.push_back({Numbered("f", i), false, 1, 0, "e"});
    ASSERT_TRUE(c->PutListing("b", "", big).ok());
  }
  const std::string data = root_ + "/metadata/data.mdb";
  struct stat st {};
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  ASSERT_GT(st.st_size, 64 * 1024);
  ASSERT_EQ(::truncate(data.c_str(), st.st_size / 3), 0);
  auto c = OpenCache();
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->GetListing("b", ""));
  ASSERT_TRUE(c->PutName("b", "k", File(1, "e")).ok());
  EXPECT_TRUE(c->GetName("b", "k"));
}

TEST_F(MetadataCacheTest, GarbageDataFileRebuilds) {
  ASSERT_EQ(::mkdir((root_ + "/metadata").c_str(), 0700), 0);
  FILE* f = std::fopen((root_ + "/metadata/data.mdb").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::string junk(64 * 1024, 'x');
  std::fwrite(junk.data(), 1, junk.size(), f);
  std::fclose(f);
  auto c = OpenCache();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->PutName("b", "k", File(1, "e")).ok());
  EXPECT_TRUE(c->GetName("b", "k"));
}

TEST_F(MetadataCacheTest, MapGrowsWhenFull) {
  auto o = Options();
  o.lmdb.initial_map_size = 1 << 20;  // 1 MiB: the listing below needs more
  auto c = MetadataCache::Open(o);
  ASSERT_TRUE(c.ok());
  CachedListing big;
  for (int i = 0; i < 60000; ++i)
    big.entries.push_back({Numbered("file-", i), false, 1, 0, "etag"});
  ASSERT_TRUE((*c)->PutListing("b", "", big).ok());
  auto l = (*c)->GetListing("b", "");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->entries.size(), 60000u);
}

// Two processes share one cache directory (LMDB forbids two environments on
// one file within a process, so the second one is a child process).
TEST_F(MetadataCacheTest, TwoProcessesShareOneDirectory) {
  auto c = OpenCache();
  ASSERT_TRUE(c->PutName("b", "from-parent", File(1, "p")).ok());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto child = MetadataCache::Open(Options());
    if (!child.ok()) ::_exit(2);
    if (!(*child)->GetName("b", "from-parent")) ::_exit(3);
    for (int i = 0; i < 100; ++i) {
      if (!(*child)->PutName("b", Numbered("from-child-", i), File(i, "c")).ok()) ::_exit(4);
    }
    ::_exit(0);
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(c->PutName("b", Numbered("parent-", i), File(i, "p")).ok());
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  for (int i = 0; i < 100; ++i) {
    auto n = c->GetName("b", Numbered("from-child-", i));
    ASSERT_TRUE(n) << i;
    EXPECT_EQ(n->size, static_cast<uint64_t>(i));
  }
}

TEST(SplitParentTest, Splits) {
  EXPECT_EQ(SplitParent("a/b/c"), std::make_pair(std::string("a/b/"), std::string("c")));
  EXPECT_EQ(SplitParent("c"), std::make_pair(std::string(), std::string("c")));
}

}  // namespace
}  // namespace bucketfs::cache
