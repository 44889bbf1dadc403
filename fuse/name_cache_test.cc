#include "fuse/name_cache.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class NameCacheTest : public ::testing::Test {
 protected:
  NameCache Make(NameCache::Options o = {}) {
    return NameCache(o, [this] { return now_; });
  }
  // What S3 said to a request sent now.
  ObjectAttrs Attrs(uint64_t size, std::string etag) const {
    return {size, std::chrono::system_clock::now(), std::move(etag), now_};
  }
  ListedEntry File(std::string name, uint64_t size = 1) const {
    return {std::move(name), Kind::kFile, Attrs(size, "\"e\"")};
  }
  static ListedEntry Dir(std::string name) { return {std::move(name), Kind::kDir, {}}; }

  steady_clock::time_point now_ = steady_clock::time_point{} + std::chrono::hours(1);
};

TEST_F(NameCacheTest, AnswerFromS3IsKeptForTheTtl) {
  NameCache c = Make({.ttl = 1.0});
  EXPECT_FALSE(c.Find("b", "d/", "x"));
  c.StoreFile("b", "d/", "x", Attrs(7, "\"a\""));
  auto hit = c.Find("b", "d/", "x");
  ASSERT_TRUE(hit);
  EXPECT_FALSE(hit->missing);
  EXPECT_EQ(hit->kind, Kind::kFile);
  EXPECT_EQ(hit->attrs.size, 7u);
  EXPECT_FALSE(c.Find("b", "e/", "x"));  // another directory
  EXPECT_FALSE(c.Find("c", "d/", "x"));  // another bucket
  EXPECT_FALSE(c.Find("b", "d/", "y"));  // no listing: other names unknown
  now_ += milliseconds(1001);
  EXPECT_FALSE(c.Find("b", "d/", "x"));
}

TEST_F(NameCacheTest, CompleteListingAnswersEveryNameIncludingMissingOnes) {
  NameCache c = Make({.ttl = 2.0});
  c.StoreListing("b", "d/", {File("a", 3), Dir("sub")}, now_);
  EXPECT_EQ(c.Find("b", "d/", "a")->attrs.size, 3u);
  EXPECT_EQ(c.Find("b", "d/", "a")->attrs.fetched, now_);  // fresh enough to open without HEAD
  EXPECT_EQ(c.Find("b", "d/", "sub")->kind, Kind::kDir);
  auto none = c.Find("b", "d/", "nope");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->missing);
  EXPECT_TRUE(none->from_listing);
  auto listing = c.Listing("b", "d/");
  ASSERT_TRUE(listing);
  ASSERT_EQ(listing->size(), 2u);
  EXPECT_EQ((*listing)[0].name, "a");
  now_ += milliseconds(2001);
  EXPECT_FALSE(c.Find("b", "d/", "nope"));
  EXPECT_FALSE(c.Listing("b", "d/"));
}

TEST_F(NameCacheTest, ChangesMadeAfterAListingBeganWinOverIt) {
  NameCache c = Make({.ttl = 5.0});
  const auto started = now_;
  now_ += milliseconds(10);
  c.Wrote("b", "d/", "new", Attrs(9, "\"n\""));
  c.Removed("b", "d/", "gone");
  // The LIST began before both changes: it lacks "new" and still has "gone".
  c.StoreListing("b", "d/", {File("gone"), File("old")}, started);
  EXPECT_EQ(c.Find("b", "d/", "new")->attrs.size, 9u);
  EXPECT_TRUE(c.Find("b", "d/", "gone")->missing);
  EXPECT_FALSE(c.Find("b", "d/", "old")->missing);
  // A listing that began after the changes is believed.
  c.StoreListing("b", "d/", {File("gone")}, now_ + milliseconds(1));
  EXPECT_FALSE(c.Find("b", "d/", "gone")->missing);
  EXPECT_TRUE(c.Find("b", "d/", "new")->missing);
}

TEST_F(NameCacheTest, WhatAHeadSaidAfterAListingBeganWinsOverIt) {
  NameCache c = Make({.ttl = 5.0});
  const auto started = now_;
  now_ += milliseconds(10);
  c.StoreDir("b", "", "sf", now_);  // a lookup's LIST found sf/ while the listing ran
  c.StoreListing("b", "", {}, started);
  EXPECT_EQ(c.Find("b", "", "sf")->kind, Kind::kDir);
  EXPECT_TRUE(c.Find("b", "", "other")->missing);
}

TEST_F(NameCacheTest, AnAnswerToARequestSentBeforeThisMountsWriteDoesNotReplaceIt) {
  NameCache c = Make({.ttl = 5.0, .negative_ttl = 5.0});
  const ObjectAttrs old_version = Attrs(3, "\"old\"");  // a HEAD sent now...
  c.StoreMissing("b", "d/", "n", now_);                 // ...and a lookup of a new name
  now_ += milliseconds(10);
  c.Wrote("b", "d/", "x", Attrs(9, "\"new\""));  // ...this mount's overwrite ends meanwhile
  c.Wrote("b", "d/", "n", Attrs(1, "\"n\""));
  const auto lookup_sent = now_ - milliseconds(5);
  now_ += milliseconds(10);
  c.StoreFile("b", "d/", "x", old_version);  // ...and the answers arrive after it
  c.StoreMissing("b", "d/", "n", lookup_sent);
  c.StoreDir("b", "d/", "x", lookup_sent);
  EXPECT_EQ(c.Find("b", "d/", "x")->attrs.etag, "\"new\"");
  EXPECT_EQ(c.Find("b", "d/", "x")->kind, Kind::kFile);
  EXPECT_FALSE(c.Find("b", "d/", "n")->missing);
  // An answer to a request sent after the write is believed.
  c.StoreFile("b", "d/", "x", Attrs(4, "\"other\""));
  EXPECT_EQ(c.Find("b", "d/", "x")->attrs.etag, "\"other\"");
  // What was held expired: any answer is better than none.
  now_ += milliseconds(6000);
  c.StoreFile("b", "d/", "x", old_version);
  EXPECT_EQ(c.Find("b", "d/", "x")->attrs.etag, "\"old\"");
}

TEST_F(NameCacheTest, ANameWhoseChildrenAreListedIsADirectory) {
  NameCache c = Make({.ttl = 5.0});
  c.StoreListing("b", "sf/", {Dir("par")}, now_);
  c.StoreListing("b", "", {}, now_);  // a store that left the prefix sf/ out
  auto sf = c.Find("b", "", "sf");
  ASSERT_TRUE(sf);
  EXPECT_FALSE(sf->missing);
  EXPECT_EQ(sf->kind, Kind::kDir);
  c.StoreListing("b", "empty/", {}, now_);  // an empty listing proves nothing
  EXPECT_TRUE(c.Find("b", "", "empty")->missing);
}

TEST_F(NameCacheTest, ADirectoryMadeHereIsKnownEmpty) {
  NameCache c = Make({.ttl = 1.0});
  c.MadeDir("b", "d/", "x");
  EXPECT_EQ(c.Find("b", "d/", "x")->kind, Kind::kDir);
  EXPECT_TRUE(c.Find("b", "d/x/", "anything")->missing);
  c.Wrote("b", "d/x/", "f", Attrs(1, "\"f\""));
  EXPECT_FALSE(c.Find("b", "d/x/", "f")->missing);
  EXPECT_EQ(c.Listing("b", "d/x/")->size(), 1u);
}

TEST_F(NameCacheTest, SingleMissesAreKeptOnlyWithANegativeTtl) {
  NameCache without = Make({.ttl = 1.0, .negative_ttl = 0});
  without.StoreMissing("b", "d/", "x", now_);
  EXPECT_FALSE(without.Find("b", "d/", "x"));
  NameCache with = Make({.ttl = 1.0, .negative_ttl = 0.5});
  with.StoreMissing("b", "d/", "x", now_);
  EXPECT_TRUE(with.Find("b", "d/", "x")->missing);
  EXPECT_FALSE(with.Find("b", "d/", "x")->from_listing);
  now_ += milliseconds(501);
  EXPECT_FALSE(with.Find("b", "d/", "x"));
}

TEST_F(NameCacheTest, ShouldListOnceAfterEnoughMissesWithinATtl) {
  NameCache c = Make({.ttl = 1.0, .misses_before_listing = 3});
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  now_ += milliseconds(1500);  // the window expired: counting starts again
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  EXPECT_TRUE(c.ShouldList("b", "d/"));
  EXPECT_FALSE(c.ShouldList("b", "d/"));  // being listed: once
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  EXPECT_FALSE(c.ShouldList("b", "e/"));  // per directory
  c.ListingDone("b", "d/");
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  EXPECT_FALSE(c.ShouldList("b", "d/"));
  EXPECT_TRUE(c.ShouldList("b", "d/"));
}

TEST_F(NameCacheTest, AListingThatJustExpiredIsRefreshedAtTheFirstMiss) {
  NameCache c = Make({.ttl = 1.0, .misses_before_listing = 4});
  c.StoreListing("b", "d/", {File("a")}, now_);
  now_ += milliseconds(1500);  // expired half a TTL ago
  EXPECT_FALSE(c.Find("b", "d/", "a"));
  EXPECT_TRUE(c.ShouldList("b", "d/"));
  c.ListingDone("b", "d/");
  now_ += milliseconds(2000);  // long expired: a directory no longer in use
  EXPECT_FALSE(c.ShouldList("b", "d/"));
}

TEST_F(NameCacheTest, LeastRecentlyUsedDirectoriesAreDroppedBeyondTheLimit) {
  NameCache c = Make({.ttl = 10.0, .max_names = 4});
  c.StoreListing("b", "a/", {File("1"), File("2")}, now_);
  c.StoreListing("b", "z/", {File("1"), File("2")}, now_);
  EXPECT_EQ(c.names(), 4u);
  c.StoreFile("b", "a/", "3", Attrs(1, ""));  // a/ is now the most recent
  EXPECT_EQ(c.names(), 3u);
  EXPECT_FALSE(c.Find("b", "z/", "1"));
  EXPECT_TRUE(c.Find("b", "a/", "1"));
}

TEST_F(NameCacheTest, ForgetTreeDropsTheDirectoryAndBelowOnly) {
  NameCache c = Make({.ttl = 10.0});
  c.StoreListing("b", "a/", {File("f")}, now_);
  c.StoreListing("b", "a/s/", {File("f")}, now_);
  c.StoreListing("b", "ab/", {File("f")}, now_);
  c.ForgetTree("b", "a/");
  EXPECT_FALSE(c.Find("b", "a/", "f"));
  EXPECT_FALSE(c.Find("b", "a/s/", "f"));
  EXPECT_TRUE(c.Find("b", "ab/", "f"));
  EXPECT_EQ(c.names(), 1u);
}

TEST_F(NameCacheTest, DropMakesTheNameAndTheListingUnknown) {
  NameCache c = Make({.ttl = 10.0});
  c.StoreListing("b", "d/", {File("f")}, now_);
  c.Drop("b", "d/", "f");
  EXPECT_FALSE(c.Find("b", "d/", "f"));
  EXPECT_FALSE(c.Find("b", "d/", "other"));  // no longer known complete
}

TEST_F(NameCacheTest, NoTtlKeepsNothing) {
  NameCache c = Make({.ttl = 0});
  c.StoreFile("b", "d/", "x", Attrs(1, ""));
  c.StoreListing("b", "d/", {File("y")}, now_);
  c.MadeDir("b", "d/", "z");
  EXPECT_FALSE(c.Find("b", "d/", "x"));
  EXPECT_FALSE(c.Find("b", "d/", "q"));
  EXPECT_FALSE(c.ShouldList("b", "d/"));
}

}  // namespace
}  // namespace bucketfs::fs
