// The requests each operation costs (docs/SEMANTICS.md, "Requests per
// operation"), counted on the fake client.
#include <gtest/gtest.h>
#include <linux/fs.h>

#include <chrono>
#include <thread>

#include "fuse/testing/fs_test_util.h"

namespace bucketfs::fs {
namespace {

using testing::FsTest;

class FsRequestBudgetTest : public FsTest {
 protected:
  FsConfig Config() {
    FsConfig c;
    c.metadata_ttl = 60;
    // Bodies of a few bytes, which could be links: listings answer for them
    // only when their type is not asked (fs_symlink_test.cc has the probe's cost).
    c.probe_link_types = false;
    return c;
  }
  int Requests() const {
    int n = 0;
    for (const char* op : {"HeadObject", "ListObjectsV2", "GetObject", "PutObject", "CopyObject",
                           "DeleteObject", "CreateMultipartUpload"}) {
      n += client_->Calls(op);
    }
    return n;
  }
  // Looks names up until one costs no HEAD: the directory's listing, fetched
  // in the background, has arrived. Returns how many names it took.
  int LookUpUntilListed(Ino dir, const std::string& stem, int max) {
    for (int i = 0; i < max; ++i) {
      const int heads = client_->Calls("HeadObject");
      auto e = fs_->Lookup(dir, stem + std::to_string(i));
      EXPECT_TRUE(e.ok()) << stem << i;
      if (client_->Calls("HeadObject") == heads) return i;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return max;
  }
};

TEST_F(FsRequestBudgetTest, ADirectoryOfManyLookupsIsListedOnceThenAnswersEveryName) {
  for (int i = 0; i < 300; ++i) client_->Put(kBucket, "d/f" + std::to_string(i), "x");
  FsConfig c = Config();
  c.listing_page_size = 100;  // three pages
  Mount(c);
  auto d = fs_->Lookup(kRootIno, "d");
  ASSERT_TRUE(d.ok());
  const int asked = LookUpUntilListed(d->ino, "f", 200);
  ASSERT_LT(asked, 200) << "the listing never arrived";
  const int heads = client_->Calls("HeadObject");
  for (int i = asked + 1; i < 300; ++i)
    ASSERT_TRUE(fs_->Lookup(d->ino, "f" + std::to_string(i)).ok());
  auto missing = fs_->Lookup(d->ino, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errno_value, ENOENT);
  EXPECT_EQ(client_->Calls("HeadObject"), heads);  // no name asked S3 any more
}

TEST_F(FsRequestBudgetTest, OpenAfterALookupAnsweredFromAListingSendsOnlyTheGet) {
  for (int i = 0; i < 20; ++i) client_->Put(kBucket, "d/f" + std::to_string(i), "data");
  Mount(Config());
  auto d = fs_->Lookup(kRootIno, "d");
  ASSERT_TRUE(d.ok());
  const int asked = LookUpUntilListed(d->ino, "f", 19);
  ASSERT_LT(asked, 19);
  auto f = fs_->Lookup(d->ino, "f19");
  ASSERT_TRUE(f.ok());
  const int heads = client_->Calls("HeadObject");
  const int gets = client_->Calls("GetObject");
  EXPECT_EQ(ReadAll(f->ino), "data");
  EXPECT_EQ(client_->Calls("HeadObject"), heads);
  EXPECT_EQ(client_->Calls("GetObject"), gets + 1);
}

TEST_F(FsRequestBudgetTest, NamesInADirectoryMadeHereCostNoLookupRequests) {
  Mount(Config());
  auto d = fs_->Mkdir(kRootIno, "new");
  ASSERT_TRUE(d.ok());
  const int before = Requests();
  auto tmp = fs_->Lookup(d->ino, "chunk.partial");  // what an O_CREAT open asks first
  ASSERT_FALSE(tmp.ok());
  EXPECT_EQ(tmp.error().errno_value, ENOENT);
  EXPECT_EQ(Requests(), before);
  WriteAndClose(d->ino, "chunk.partial", "bytes");
  EXPECT_EQ(Requests(), before + 1);  // the PutObject
  EXPECT_EQ(client_->Calls("PutObject"), 1);
  auto written = fs_->Lookup(d->ino, "chunk.partial");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->attr.st_size, 5);
  EXPECT_EQ(Requests(), before + 1);
}

TEST_F(FsRequestBudgetTest, RenameOfAFileJustWrittenIsCopyAndDeleteOnly) {
  Mount(Config());
  auto d = fs_->Mkdir(kRootIno, "z");
  ASSERT_TRUE(d.ok());
  WriteAndClose(d->ino, "c.tmp", "chunk");
  const int heads = client_->Calls("HeadObject"), lists = client_->Calls("ListObjectsV2");
  ASSERT_TRUE(fs_->Rename(d->ino, "c.tmp", d->ino, "c", 0).ok());
  EXPECT_EQ(client_->Calls("CopyObject"), 1);
  EXPECT_EQ(client_->Calls("DeleteObject"), 1);
  EXPECT_EQ(client_->Calls("HeadObject"), heads);
  EXPECT_EQ(client_->Calls("ListObjectsV2"), lists);
  EXPECT_EQ(client_->Data(kBucket, "z/c"), "chunk");
  EXPECT_FALSE(client_->Exists(kBucket, "z/c.tmp"));
  // Both names are known here at once: the old one gone, the new one a file.
  const int before = Requests();
  auto old_name = fs_->Lookup(d->ino, "c.tmp");
  ASSERT_FALSE(old_name.ok());
  EXPECT_EQ(old_name.error().errno_value, ENOENT);
  auto new_name = fs_->Lookup(d->ino, "c");
  ASSERT_TRUE(new_name.ok());
  EXPECT_EQ(new_name->attr.st_size, 5);
  EXPECT_EQ(Requests(), before);
}

TEST_F(FsRequestBudgetTest, AnUnlinkedNameIsGoneWithoutAskingS3) {
  client_->Put(kBucket, "f", "x");
  FsConfig c = Config();
  c.allow_delete = true;
  Mount(c);
  ASSERT_TRUE(fs_->Lookup(kRootIno, "f").ok());
  ASSERT_TRUE(fs_->Unlink(kRootIno, "f").ok());
  // (The first lookup's LIST may still be under way: count HEADs, which a
  // lookup sends on its own thread.)
  const int heads = client_->Calls("HeadObject");
  auto e = fs_->Lookup(kRootIno, "f");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().errno_value, ENOENT);
  EXPECT_EQ(client_->Calls("HeadObject"), heads);
}

TEST_F(FsRequestBudgetTest, ANameChangedInS3IsAskedAgainOnceTheTtlPassed) {
  client_->Put(kBucket, "f", "x");
  FsConfig c;
  c.metadata_ttl = 0.05;
  Mount(c);
  ASSERT_EQ(fs_->Lookup(kRootIno, "f")->attr.st_size, 1);
  client_->Put(kBucket, "f", "longer");
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(fs_->Lookup(kRootIno, "f")->attr.st_size, 6);
}

}  // namespace
}  // namespace bucketfs::fs
