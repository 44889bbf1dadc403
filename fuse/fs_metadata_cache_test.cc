// The filesystem core with a persistent metadata cache (--cache): requests
// saved on warm walks and remounts, negative entries, own writes seen at
// once, other writers' changes after the TTL.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "cache/metadata_cache.h"
#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

class MetadataCacheFsTest : public testing::FsTest {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fs-metacache-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    fs_.reset();
    std::filesystem::remove_all(dir_);
  }
  // One LMDB environment per process: the old core goes before the new one.
  Filesystem& Remount(double ttl, double negative_ttl = 0) {
    fs_.reset();
    FsConfig c;
    c.cache_dir = dir_;
    c.cache_scope = "fake";
    c.metadata_ttl = ttl;
    c.negative_ttl = negative_ttl;
    c.allow_delete = true;
    c.probe_link_types = false;  // tiny bodies: see fs_request_budget_test.cc
    return Mount(c);
  }
  int Requests() const { return client_->Calls("HeadObject") + client_->Calls("ListObjectsV2"); }
  // Waits (at most 30 s) until `op` was called `n` times: for requests a
  // background thread sends, such as the ListingPrefetcher's.
  void WaitForCalls(const std::string& op, int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (client_->Calls(op) < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(client_->Calls(op), n) << op;
  }
  // Reads every directory below `dir` and looks up every name.
  size_t Walk(Ino dir) {
    size_t n = 0;
    for (const auto& e : ListDir(dir, /*plus=*/false)) {
      if (e.name == "." || e.name == "..") continue;
      ++n;
      auto entry = fs_->Lookup(dir, e.name);
      EXPECT_TRUE(entry.ok()) << e.name;
      if (!entry.ok()) continue;
      EXPECT_TRUE(fs_->GetAttr(entry->ino).ok());
      if (e.is_dir) n += Walk(entry->ino);
    }
    return n;
  }
  void MakeTree() {
    for (int d = 0; d < 3; ++d) {
      for (int f = 0; f < 4; ++f) {
        std::string key = "d";  // built in steps: g++ 12 warns (-Wrestrict) on "d" + ...
        key += std::to_string(d);
        key += "/f";
        key += std::to_string(f);
        client_->Put(kBucket, key, "x");
      }
    }
    client_->Put(kBucket, "top", "hello");
  }

  std::string dir_;
};

TEST_F(MetadataCacheFsTest, WarmAndRemountedWalksSendNoRequests) {
  MakeTree();
  Remount(cache::kIndefiniteTtl);
  EXPECT_EQ(Walk(kRootIno), 16u);
  Remount(cache::kIndefiniteTtl);  // also waits out the listing fan-out still in flight
  const int cold = Requests();
  EXPECT_GT(cold, 0);
  EXPECT_EQ(Walk(kRootIno), 16u);
  EXPECT_EQ(Requests(), cold);
  auto top = fs_->Lookup(kRootIno, "top");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->attr.st_size, 5);
  EXPECT_EQ(ReadAll(top->ino), "hello");  // the cached ETag still reads the object
}

TEST_F(MetadataCacheFsTest, LookupsWithoutListingAreCachedAcrossRemounts) {
  MakeTree();
  Remount(cache::kIndefiniteTtl);
  ASSERT_TRUE(fs_->Lookup(kRootIno, "top").ok());
  auto d0 = fs_->Lookup(kRootIno, "d0");
  ASSERT_TRUE(d0.ok());
  const int cold = Requests();
  Remount(cache::kIndefiniteTtl);
  auto top = fs_->Lookup(kRootIno, "top");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->attr.st_size, 5);
  d0 = fs_->Lookup(kRootIno, "d0");
  ASSERT_TRUE(d0.ok());
  EXPECT_TRUE(S_ISDIR(d0->attr.st_mode));
  EXPECT_EQ(Requests(), cold);
}

TEST_F(MetadataCacheFsTest, MissingNamesAskOnceWithNegativeTtl) {
  Remount(60, 60);
  for (int i = 0; i < 100; ++i) {
    auto r = fs_->Lookup(kRootIno, "missing.py");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().errno_value, ENOENT);
  }
  EXPECT_EQ(client_->Calls("HeadObject"), 1);
  Remount(60, 60);
  EXPECT_FALSE(fs_->Lookup(kRootIno, "missing.py").ok());
  EXPECT_EQ(client_->Calls("HeadObject"), 1);
}

TEST_F(MetadataCacheFsTest, WithoutNegativeTtlMissingNamesAreAskedEachTime) {
  Remount(60, 0);
  EXPECT_FALSE(fs_->Lookup(kRootIno, "missing").ok());
  EXPECT_FALSE(fs_->Lookup(kRootIno, "missing").ok());
  EXPECT_EQ(client_->Calls("HeadObject"), 2);
}

TEST_F(MetadataCacheFsTest, OwnWritesAreSeenAtOnce) {
  MakeTree();
  Remount(cache::kIndefiniteTtl, cache::kIndefiniteTtl);
  EXPECT_FALSE(fs_->Lookup(kRootIno, "new").ok());  // cached as missing
  Walk(kRootIno);                                   // root listing cached
  auto created = fs_->Create(kRootIno, "new", O_WRONLY | O_CREAT);
  ASSERT_TRUE(created.ok());
  const std::string data = "fresh";
  ASSERT_TRUE(fs_->Write(created->second.fh, 0, Bytes(data)).ok());
  fs_->Release(created->second.fh);
  fs_->Forget(created->first.ino, 1);
  Remount(cache::kIndefiniteTtl, cache::kIndefiniteTtl);
  auto names = Names(ListDir(kRootIno, false));
  EXPECT_NE(std::find(names.begin(), names.end(), "new"), names.end());
  auto e = fs_->Lookup(kRootIno, "new");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->attr.st_size, 5);

  ASSERT_TRUE(fs_->Unlink(kRootIno, "new").ok());
  EXPECT_FALSE(fs_->Lookup(kRootIno, "new").ok());
  names = Names(ListDir(kRootIno, false));
  EXPECT_EQ(std::find(names.begin(), names.end(), "new"), names.end());

  auto made = fs_->Mkdir(kRootIno, "newdir");
  ASSERT_TRUE(made.ok());
  names = Names(ListDir(kRootIno, false));
  EXPECT_NE(std::find(names.begin(), names.end(), "newdir"), names.end());
}

TEST_F(MetadataCacheFsTest, OtherWritersAppearAfterTheTtl) {
  MakeTree();
  // A TTL a loaded machine cannot outlast between the walk and the listing
  // (0.3 s failed once at load 15: the cached listing had already expired).
  Remount(2.0);
  Walk(kRootIno);
  client_->Put(kBucket, "late", "abc");
  auto names = Names(ListDir(kRootIno, false));
  EXPECT_EQ(std::find(names.begin(), names.end(), "late"), names.end());
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  names = Names(ListDir(kRootIno, false));
  EXPECT_NE(std::find(names.begin(), names.end(), "late"), names.end());
}

// With the cache, --readdirplus auto gives a process that never looked up a
// file names only (ino 0): its later stat of one is answered from the cached
// listing, without a request. A process that stats files gets attributes.
TEST_F(MetadataCacheFsTest, ReaddirPlusAutoGivesNamesOnlyUntilAProcessStatsFiles) {
  client_->Put(kBucket, "a", "1");
  client_->Put(kBucket, "b", "22");
  client_->Put(kBucket, "d/x", "x");
  Remount(60);
  auto plus_ids = [&](pid_t pid) {
    std::map<std::string, Ino> ids;
    auto fh = fs_->OpenDir(kRootIno);
    EXPECT_TRUE(fh.ok());
    EXPECT_TRUE(fs_->ReadDir(
                       kRootIno, fh->fh, 2, true,
                       [&](const std::string& n, const struct stat&, const Entry* e, off_t) {
                         EXPECT_NE(e, nullptr);
                         ids[n] = e ? e->ino : 0;
                         return true;
                       },
                       pid)
                    .ok());
    fs_->ReleaseDir(fh->fh);
    return ids;
  };
  auto ids = plus_ids(77);
  // Reading the root lists d/ ahead on a prefetch worker, which sends that
  // LIST whenever it gets to run: wait for it, or on a loaded machine it can
  // come after `before` below and be counted as the stat's request.
  ASSERT_NO_FATAL_FAILURE(WaitForCalls("ListObjectsV2", 2));  // the root's, then d/'s
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids["a"], 0u);  // a name only: no inode here or in the kernel
  EXPECT_EQ(ids["b"], 0u);
  EXPECT_NE(ids["d"], 0u);                           // directories always: every walker enters them
  ASSERT_TRUE(fs_->Lookup(kRootIno, "d", 77).ok());  // entering a directory is no stat
  EXPECT_EQ(plus_ids(77)["a"], 0u);
  const int before = Requests();
  auto a = fs_->Lookup(kRootIno, "a", 77);  // 77 stats a file: from the cached listing
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->attr.st_size, 1);
  EXPECT_EQ(Requests(), before);
  ids = plus_ids(77);  // now a stat walker
  EXPECT_NE(ids["a"], 0u);
  EXPECT_NE(ids["b"], 0u);
  EXPECT_EQ(plus_ids(78)["b"], 0u);  // another process still gets names
  EXPECT_NE(plus_ids(0)["b"], 0u);   // an unknown caller gets attributes
}

}  // namespace
}  // namespace bucketfs::fs
