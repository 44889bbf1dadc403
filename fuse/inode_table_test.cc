#include "fuse/inode_table.h"

#include <gtest/gtest.h>

namespace bucketfs::fs {
namespace {

TEST(InodeTableTest, AcquireCountsEveryReplyAndForgetErases) {
  InodeTable t("b", "p/");
  EXPECT_EQ(t.size(), 1u);
  Ino a = t.Acquire(kRootIno, "a", Kind::kFile, "b", "p/a", std::nullopt);
  EXPECT_NE(a, kRootIno);
  EXPECT_EQ(t.Acquire(kRootIno, "a", Kind::kFile, "b", "p/a", std::nullopt), a);
  EXPECT_EQ(t.Get(a)->lookups, 2u);
  t.Forget(a, 1);
  EXPECT_EQ(t.Get(a)->lookups, 1u);
  t.Forget(a, 1);
  EXPECT_FALSE(t.Get(a).has_value());
  EXPECT_FALSE(t.Find(kRootIno, "a").has_value());
  EXPECT_EQ(t.size(), 1u);
}

TEST(InodeTableTest, InodeNumbersAreNotReused) {
  InodeTable t("b", "");
  Ino a = t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", std::nullopt);
  t.Forget(a, 1);
  Ino again = t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", std::nullopt);
  EXPECT_NE(a, again);
}

TEST(InodeTableTest, AnAnswerSentBeforeThisMountsWriteDoesNotReplaceIt) {
  InodeTable t("b", "");
  const auto sent = std::chrono::steady_clock::now();
  const ObjectAttrs old_version{3, {}, "\"old\"", sent};  // a HEAD or LIST sent then
  const ObjectAttrs written{9, {}, "\"new\"", sent + std::chrono::milliseconds(10)};
  Ino a = t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", written);
  t.SetAttrs(a, old_version);  // arrives after the write ended
  EXPECT_EQ(t.Get(a)->attrs.etag, "\"new\"");
  EXPECT_EQ(t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", old_version), a);
  EXPECT_EQ(t.Get(a)->attrs.etag, "\"new\"");
  EXPECT_EQ(t.Get(a)->attrs.size, 9u);
  // Sent after the write: believed.
  const ObjectAttrs later{4, {}, "\"later\"", sent + std::chrono::milliseconds(20)};
  t.SetAttrs(a, later);
  EXPECT_EQ(t.Get(a)->attrs.etag, "\"later\"");
  // Attributes without a time ("ask again") always apply.
  t.SetAttrs(a, ObjectAttrs{});
  EXPECT_EQ(t.Get(a)->attrs.etag, "");
  t.SetAttrs(a, old_version);
  EXPECT_EQ(t.Get(a)->attrs.etag, "\"old\"");
}

TEST(InodeTableTest, OneVersionKeepsTheTimeTheKernelWasGiven) {
  // This mount's write recorded its own commit time; the store then says the
  // same version (same ETag) was modified at another time. The kernel keeps
  // the first, so that it has no reason to drop the file's page cache; a new
  // version brings its own time.
  InodeTable t("b", "");
  const auto sent = std::chrono::steady_clock::now();
  const auto committed =
      std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'700'000'000'123'456'789));
  const auto stored = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'001));
  Ino a =
      t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", ObjectAttrs{9, committed, "\"v1\"", sent});
  t.SetAttrs(a, ObjectAttrs{9, stored, "\"v1\"", sent + std::chrono::milliseconds(5)});
  EXPECT_EQ(t.Get(a)->attrs.mtime, committed);
  EXPECT_EQ(t.Acquire(kRootIno, "a", Kind::kFile, "b", "a",
                      ObjectAttrs{9, stored, "\"v1\"", sent + std::chrono::milliseconds(6)}),
            a);
  EXPECT_EQ(t.Get(a)->attrs.mtime, committed);
  t.SetAttrs(a, ObjectAttrs{7, stored, "\"v2\"", sent + std::chrono::milliseconds(7)});
  EXPECT_EQ(t.Get(a)->attrs.mtime, stored);
  EXPECT_EQ(t.Get(a)->attrs.size, 7u);
}

TEST(InodeTableTest, KindChangeDetachesOldInode) {
  InodeTable t("b", "");
  Ino file = t.Acquire(kRootIno, "x", Kind::kFile, "b", "x", std::nullopt);
  Ino dir = t.Acquire(kRootIno, "x", Kind::kDir, "b", "x/", std::nullopt);
  EXPECT_NE(file, dir);
  EXPECT_EQ(*t.Find(kRootIno, "x"), dir);
  ASSERT_TRUE(t.Get(file).has_value());  // still known until forgotten
  t.Forget(file, 1);
  EXPECT_FALSE(t.Get(file).has_value());
  EXPECT_EQ(*t.Find(kRootIno, "x"), dir);  // forgetting the old one keeps the new link
}

TEST(InodeTableTest, UnlinkedInodeLivesUntilForgotten) {
  InodeTable t("b", "");
  Ino a = t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", std::nullopt);
  t.Unlink(kRootIno, "a");
  EXPECT_FALSE(t.Find(kRootIno, "a").has_value());
  EXPECT_TRUE(t.Get(a).has_value());
  Ino b = t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", std::nullopt);
  EXPECT_NE(a, b);
  t.Forget(a, 1);
  EXPECT_EQ(*t.Find(kRootIno, "a"), b);
  t.Forget(b, 1);
  EXPECT_EQ(t.size(), 1u);
}

TEST(InodeTableTest, RenameOfDirectoryMovesDescendantKeys) {
  InodeTable t("b", "");
  Ino d = t.Acquire(kRootIno, "d", Kind::kDir, "b", "d/", std::nullopt);
  Ino f = t.Acquire(d, "f", Kind::kFile, "b", "d/f", std::nullopt);
  Ino other = t.Acquire(kRootIno, "dx", Kind::kFile, "b", "dx", std::nullopt);
  t.Rename(kRootIno, "d", kRootIno, "e", "b", "e/");
  EXPECT_EQ(t.Get(d)->key, "e/");
  EXPECT_EQ(t.Get(f)->key, "e/f");
  EXPECT_EQ(t.Get(other)->key, "dx");
  EXPECT_EQ(*t.Find(kRootIno, "e"), d);
  EXPECT_FALSE(t.Find(kRootIno, "d").has_value());
}

TEST(InodeTableDeathTest, ForgetUnderflowAborts) {
  InodeTable t("b", "");
  Ino a = t.Acquire(kRootIno, "a", Kind::kFile, "b", "a", std::nullopt);
  EXPECT_DEATH(t.Forget(a, 2), "underflow");
}

TEST(InodeTableTest, RootIsNeverErased) {
  InodeTable t("b", "");
  t.Forget(kRootIno, 1);
  EXPECT_TRUE(t.Get(kRootIno).has_value());
}

}  // namespace
}  // namespace bucketfs::fs
