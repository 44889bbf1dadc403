// Lookup, getattr, readdir of the filesystem core over the fake client.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsLookupTest : public FsTest {};

TEST_F(FsLookupTest, FileAndImplicitDirectory) {
  client_->Put(kBucket, "file.txt", "hello");
  client_->Put(kBucket, "implicit/child", "x");
  FsConfig config;
  config.uid = 1234;
  config.gid = 99;
  config.file_mode = 0640;
  Mount(config);
  auto f = fs_->Lookup(kRootIno, "file.txt");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(S_ISREG(f->attr.st_mode));
  EXPECT_EQ(f->attr.st_mode & 0777, 0640u);
  EXPECT_EQ(f->attr.st_size, 5);
  EXPECT_EQ(f->attr.st_uid, 1234u);
  EXPECT_EQ(f->attr.st_gid, 99u);
  auto d = fs_->Lookup(kRootIno, "implicit");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(S_ISDIR(d->attr.st_mode));
  EXPECT_EQ(d->attr.st_nlink, 2u);
  auto child = fs_->Lookup(d->ino, "child");
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(fs_->inodes().Get(child->ino)->key, "implicit/child");
  auto missing = fs_->Lookup(kRootIno, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errno_value, ENOENT);
}

TEST_F(FsLookupTest, LookupOfAMissingNameIssuesOneHeadAndOneList) {
  Mount();
  auto e = fs_->Lookup(kRootIno, "a");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().errno_value, ENOENT);
  EXPECT_EQ(client_->Calls("HeadObject"), 1);
  EXPECT_EQ(client_->Calls("ListObjectsV2"), 1);
}

TEST_F(FsLookupTest, AFoundFileAnswersWithoutWaitingForTheList) {
  client_->Put(kBucket, "a", "1");
  Mount();
  client_->Hold("ListObjectsV2");  // a LIST that never answers while held
  auto e = fs_->Lookup(kRootIno, "a");
  client_->Release("ListObjectsV2");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(S_ISREG(e->attr.st_mode));
  EXPECT_EQ(client_->Calls("HeadObject"), 1);
}

// A name the kernel holds as a file, looked up again once its entry expired
// (each open of a file read every epoch, with a short TTL): a HEAD alone.
TEST_F(FsLookupTest, ALookupAgainOfAHeldFileIsAHeadAlone) {
  client_->Put(kBucket, "a", "1");
  FsConfig config;
  config.metadata_ttl = 0;
  config.probe_link_types = false;  // "a" could be a link's body: fs_symlink_test.cc
  Mount(config);
  ASSERT_EQ(ListDir(kRootIno, /*plus=*/true).size(), 3u);  // the kernel now holds "a"
  client_->Hold("ListObjectsV2");  // a LIST sent in the background would wait here
  auto again = fs_->Lookup(kRootIno, "a");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(S_ISREG(again->attr.st_mode));
  EXPECT_EQ(client_->Calls("HeadObject"), 1);
  // A LIST posted to the lookup pool reaches the hold within moments.
  for (int i = 0; i < 20 && client_->Waiting("ListObjectsV2") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(client_->Waiting("ListObjectsV2"), 0);
  client_->Release("ListObjectsV2");
}

// The held file is gone and a directory has its name: the HEAD's 404 is
// followed by the LIST that finds the directory.
TEST_F(FsLookupTest, AHeldFileReplacedByADirectoryIsFoundAsADirectory) {
  client_->Put(kBucket, "a", "1");
  FsConfig config;
  config.metadata_ttl = 0;
  Mount(config);
  ASSERT_TRUE(fs_->Lookup(kRootIno, "a").ok());
  ASSERT_TRUE(client_->DeleteObject({kBucket, "a"}).ok());
  client_->Put(kBucket, "a/inner", "2");
  auto again = fs_->Lookup(kRootIno, "a");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(S_ISDIR(again->attr.st_mode));
  ASSERT_TRUE(client_->DeleteObject({kBucket, "a/inner"}).ok());
  auto gone = fs_->Lookup(kRootIno, "a");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().errno_value, ENOENT);
}

TEST_F(FsLookupTest, FileWinsOverDirectoryOfSameName) {
  client_->Put(kBucket, "x", "file");
  client_->Put(kBucket, "x/inner", "y");
  Mount();
  auto e = fs_->Lookup(kRootIno, "x");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(S_ISREG(e->attr.st_mode));
  auto entries = ListDir(kRootIno, false);
  EXPECT_EQ(Names(entries), (std::vector<std::string>{".", "..", "x"}));
  EXPECT_FALSE(entries[2].is_dir);
}

TEST_F(FsLookupTest, LongNameIsTooLongAndOddKeysAreSkipped) {
  client_->Put(kBucket, std::string(300, 'n'), "x");
  client_->Put(kBucket, "a//b", "x");
  client_->Put(kBucket, "./c", "x");
  client_->Put(kBucket, "../d", "x");
  client_->Put(kBucket, "marker/", "");
  client_->Put(kBucket, "ok", "x");
  Mount();
  auto e = fs_->Lookup(kRootIno, std::string(300, 'n'));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().errno_value, ENAMETOOLONG);
  auto names = Names(ListDir(kRootIno, true));
  EXPECT_EQ(names, (std::vector<std::string>{".", "..", "a", "marker", "ok"}));
  // "a" is a directory whose only child has an empty name: it lists empty.
  auto a = fs_->Lookup(kRootIno, "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Names(ListDir(a->ino, false)), (std::vector<std::string>{".", ".."}));
}

// Node ids of a READDIRPLUS of the root by `pid`, by name ("." and ".." left out).
std::map<std::string, Ino> PlusNodeIds(Filesystem& fs, pid_t pid) {
  std::map<std::string, Ino> ids;
  auto fh = fs.OpenDir(kRootIno);
  EXPECT_TRUE(fh.ok());
  EXPECT_TRUE(fs.ReadDir(
                    kRootIno, fh->fh, 2, true,
                    [&](const std::string& n, const struct stat& st, const Entry* e, off_t) {
                      EXPECT_NE(e, nullptr);
                      EXPECT_NE(st.st_ino, 0u);  // d_ino: glibc skips 0
                      EXPECT_EQ(e->attr.st_mode & S_IFMT, st.st_mode & S_IFMT);
                      ids[n] = e->ino;
                      return true;
                    },
                    pid)
                  .ok());
  fs.ReleaseDir(fh->fh);
  return ids;
}

// Without the metadata cache a name-only entry would cost a LIST and a HEAD
// at its first stat (`ls -l`), so auto gives every entry its attributes.
// With the cache, auto gives names only (MetadataCacheFsTest).
TEST_F(FsLookupTest, ReaddirPlusAutoWithoutMetadataCacheGivesEveryProcessAttributes) {
  client_->Put(kBucket, "a", "1");
  client_->Put(kBucket, "d/x", "x");
  FsConfig config;
  config.probe_link_types = false;  // "a" could be a link's body: fs_symlink_test.cc
  Mount(config);                    // --readdirplus auto, no --cache
  auto ids = PlusNodeIds(*fs_, 77);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_NE(ids["a"], 0u);
  EXPECT_NE(ids["d"], 0u);
  auto attr = fs_->GetAttr(ids["a"]);  // `ls -l`'s stat: no request
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->st_size, 1);
  EXPECT_EQ(client_->Calls("HeadObject"), 0);
}

TEST_F(FsLookupTest, ReaddirPlusOnGivesEveryProcessAttributes) {
  client_->Put(kBucket, "a", "1");
  FsConfig config;
  config.readdirplus = FsConfig::ReaddirPlus::kOn;
  config.probe_link_types = false;
  Mount(config);
  EXPECT_NE(PlusNodeIds(*fs_, 77)["a"], 0u);
}

TEST_F(FsLookupTest, ForgetReturnsTableToRootOnly) {
  for (int i = 0; i < 5; ++i) client_->Put(kBucket, "f" + std::to_string(i), "x");
  client_->Put(kBucket, "d/x", "x");
  Mount();
  auto a = fs_->Lookup(kRootIno, "f1");
  auto b = fs_->Lookup(kRootIno, "f1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->ino, b->ino);
  auto entries = ListDir(kRootIno, true, 2);  // small replies: rejected entries are not counted
  EXPECT_EQ(entries.size(), 8u);
  EXPECT_EQ(fs_->inodes().Get(a->ino)->lookups, 3u);
  for (const auto& e : entries) {
    if (e.ino != 0) fs_->Forget(e.ino, 1);
  }
  fs_->Forget(a->ino, 2);
  EXPECT_EQ(fs_->inodes().size(), 1u);
}

TEST_F(FsLookupTest, ReaddirPagesAndOffsetsAreStable) {
  for (int i = 0; i < 25; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "k%03d", i);
    client_->Put(kBucket, std::string("big/") + name, std::string(i, 'z'));
  }
  client_->Put(kBucket, "big/sub/x", "x");
  FsConfig config;
  config.listing_page_size = 4;
  config.probe_link_types = false;  // sizes of 0 to 24 bytes: see fs_symlink_test.cc
  Mount(config);
  auto dir = fs_->Lookup(kRootIno, "big");
  ASSERT_TRUE(dir.ok());
  auto entries = ListDir(dir->ino, true, 3);
  ASSERT_EQ(entries.size(), 2u + 26u);
  EXPECT_EQ(entries[2].name, "k000");
  EXPECT_EQ(entries[27].name, "sub");
  EXPECT_TRUE(entries[27].is_dir);
  EXPECT_EQ(entries[12].size, 10u);  // readdirplus sizes come from the listing
  EXPECT_GE(client_->Calls("ListObjectsV2"), 7);
  const int heads = client_->Calls("HeadObject");
  // Attributes from the listing: stat right after costs no HEAD.
  auto st = fs_->GetAttr(entries[5].ino);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_size, 3);
  EXPECT_EQ(client_->Calls("HeadObject"), heads);
  for (size_t i = 0; i + 1 < entries.size(); ++i) EXPECT_EQ(entries[i].next, off_t(i + 1));

  // Re-reading from an earlier offset through the same handle gives the same entries.
  auto fh = fs_->OpenDir(dir->ino);
  ASSERT_TRUE(fh.ok());
  std::vector<std::string> first, again;
  auto collect = [](std::vector<std::string>& into) {
    return [&into](const std::string& n, const struct stat&, const Entry*, off_t) {
      into.push_back(n);
      return into.size() < 10;
    };
  };
  ASSERT_TRUE(fs_->ReadDir(dir->ino, fh->fh, 0, false, collect(first)).ok());
  ASSERT_TRUE(fs_->ReadDir(dir->ino, fh->fh, 5, false, collect(again)).ok());
  EXPECT_EQ(again[0], first[5]);
  fs_->ReleaseDir(fh->fh);
}

// The kernel applies a READDIRPLUS entry's size to an inode unless a write
// began after the request was sent, so the size of a file being written must
// be its size when the entry is served, not when the listing was read.
TEST_F(FsLookupTest, ReaddirPlusGivesAFileBeingWrittenItsSizeWhenServed) {
  client_->Put(kBucket, "a", "1");
  Mount();
  auto c = fs_->Create(kRootIno, "w", O_WRONLY | O_CREAT);
  ASSERT_TRUE(c.ok());
  auto fh = fs_->OpenDir(kRootIno);
  ASSERT_TRUE(fh.ok());
  // First call: the listing is read, the kernel's buffer full before "w".
  ASSERT_TRUE(fs_->ReadDir(kRootIno, fh->fh, 2, true,
                           [](const std::string&, const struct stat&, const Entry*, off_t) {
                             return false;
                           })
                  .ok());
  const std::string data(4097, 'x');
  auto wrote = fs_->Write(c->second.fh, 0, std::as_bytes(std::span(data.data(), data.size())));
  ASSERT_TRUE(wrote.ok());
  off_t size = -1;
  ASSERT_TRUE(fs_->ReadDir(kRootIno, fh->fh, 2, true,
                           [&](const std::string& n, const struct stat&, const Entry* e, off_t) {
                             if (n == "w" && e) size = e->attr.st_size;
                             return true;
                           })
                  .ok());
  fs_->ReleaseDir(fh->fh);
  EXPECT_EQ(size, 4097);
  ASSERT_TRUE(fs_->Flush(c->second.fh).ok());
  fs_->Release(c->second.fh);
}

TEST_F(FsLookupTest, GetAttrRefreshesAfterTtl) {
  client_->Put(kBucket, "f", "1234");
  FsConfig config;
  config.metadata_ttl = 0;
  Mount(config);
  auto e = fs_->Lookup(kRootIno, "f");
  ASSERT_TRUE(e.ok());
  client_->Put(kBucket, "f", "123456789");
  auto st = fs_->GetAttr(e->ino);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_size, 9);
  ASSERT_TRUE(client_->DeleteObject({kBucket, "f"}).ok());
  EXPECT_EQ(fs_->GetAttr(e->ino).error().errno_value, ENOENT);
}

TEST_F(FsLookupTest, PrefixMountShowsOnlyThePrefix) {
  client_->Put(kBucket, "top", "x");
  client_->Put(kBucket, "pre/a", "x");
  client_->Put(kBucket, "pre/d/b", "x");
  FsConfig config;
  config.prefix = "pre/";
  Mount(config);
  EXPECT_EQ(Names(ListDir(kRootIno, false)), (std::vector<std::string>{".", "..", "a", "d"}));
  EXPECT_FALSE(fs_->Lookup(kRootIno, "top").ok());
  auto a = fs_->Lookup(kRootIno, "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(fs_->inodes().Get(a->ino)->key, "pre/a");
}

TEST_F(FsLookupTest, AllBucketsRootListsBuckets) {
  client_->CreateBucketNamed("second");
  client_->Put("second", "obj", "data");
  all_buckets_ = true;
  Mount();
  EXPECT_EQ(Names(ListDir(kRootIno, true)), (std::vector<std::string>{".", "..", "bkt", "second"}));
  auto b = fs_->Lookup(kRootIno, "second");
  ASSERT_TRUE(b.ok());
  auto obj = fs_->Lookup(b->ino, "obj");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(ReadAll(obj->ino), "data");
  EXPECT_EQ(fs_->Lookup(kRootIno, "nobucket").error().errno_value, ENOENT);
  EXPECT_EQ(fs_->Mkdir(kRootIno, "newbucket").error().errno_value, EPERM);
}

TEST_F(FsLookupTest, S3FailureCarriesItsErrno) {
  client_->Put(kBucket, "f", "x");
  Mount();
  client_->FailNext("HeadObject", EACCES);
  auto e = fs_->Lookup(kRootIno, "f");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().errno_value, EACCES);
}

TEST_F(FsLookupTest, StatFsIsSensible) {
  Mount();
  auto s = fs_->StatFs();
  EXPECT_EQ(s.f_namemax, 255u);
  EXPECT_GT(s.f_blocks, 1u << 30);
  EXPECT_EQ(s.f_bfree, s.f_blocks);
}

}  // namespace
}  // namespace bucketfs::fs
