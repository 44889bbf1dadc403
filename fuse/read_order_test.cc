#include "fuse/read_order.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bucketfs::fs {
namespace {

std::string Name(size_t i) { return "d/f" + std::to_string(i); }

std::vector<ReadOrder::Target> Targets(size_t n) {
  std::vector<ReadOrder::Target> v;
  for (size_t i = 0; i < n; ++i) v.push_back({"b", Name(i)});
  return v;
}

// Resolves every position handed out, as the mount does with a HEAD.
void ResolveAll(ReadOrder& order) {
  auto todo = order.TakeUnresolved();
  for (auto& [pos, t] : todo.positions) {
    order.Resolved(pos, todo.generation, ObjectVersion{t.bucket, t.key, "e" + t.key, 10});
  }
}

std::vector<std::string> Keys(const std::vector<ObjectVersion>& v) {
  std::vector<std::string> out;
  for (const auto& o : v) out.push_back(o.key);
  return out;
}

TEST(ReadOrderTest, UnusedOrderChangesNothing) {
  ReadOrder order(4);
  EXPECT_FALSE(order.Opened("b", "x"));
  EXPECT_TRUE(order.TakeUnresolved().positions.empty());
  EXPECT_TRUE(order.Wanted().empty());
  order.Add(Targets(3));
  EXPECT_FALSE(order.Opened("b", "not-announced"));
  EXPECT_FALSE(order.Opened("other-bucket", Name(0)));
  EXPECT_EQ(order.stats().opened, 0u);
}

TEST(ReadOrderTest, FirstWindowIsHandedOutOnceInOrder) {
  ReadOrder order(4);
  EXPECT_EQ(order.Add(Targets(10)), 10u);
  auto todo = order.TakeUnresolved();
  ASSERT_EQ(todo.positions.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(todo.positions[i].first, i);
    EXPECT_EQ(todo.positions[i].second.key, Name(i));
  }
  EXPECT_TRUE(order.TakeUnresolved().positions.empty());  // being resolved already
  EXPECT_TRUE(order.Wanted().empty());                    // nothing resolved yet
  for (auto& [pos, t] : todo.positions) {
    order.Resolved(pos, todo.generation, ObjectVersion{t.bucket, t.key, "e", 10});
  }
  EXPECT_EQ(Keys(order.Wanted()), (std::vector<std::string>{Name(0), Name(1), Name(2), Name(3)}));
}

TEST(ReadOrderTest, OpensMoveTheWindowAndKeepStragglers) {
  ReadOrder order(4);
  order.Add(Targets(20));
  ResolveAll(order);
  ASSERT_TRUE(order.Opened("b", Name(2)));  // a parallel reader got ahead of 0 and 1
  EXPECT_EQ(order.stats().cursor, 3u);
  ResolveAll(order);  // positions 4..6 join the window
  EXPECT_EQ(Keys(order.Wanted()),
            (std::vector<std::string>{Name(0), Name(1), Name(3), Name(4), Name(5), Name(6)}));
  ASSERT_TRUE(order.Opened("b", Name(0)));
  EXPECT_EQ(order.stats().cursor, 3u);       // the cursor never goes back
  EXPECT_FALSE(order.Opened("b", Name(0)));  // once per announcement
}

TEST(ReadOrderTest, FilesPassedByMoreThanTheWindowAreGivenUp) {
  ReadOrder order(4);
  order.Add(Targets(20));
  ResolveAll(order);
  ASSERT_TRUE(order.Opened("b", Name(12)));  // a jump: 0..7 are more than 4 behind
  EXPECT_FALSE(order.Opened("b", Name(1)));
  ResolveAll(order);
  EXPECT_EQ(Keys(order.Wanted()),
            (std::vector<std::string>{Name(13), Name(14), Name(15), Name(16)}));
  // Positions 4..11 were never resolved: they are behind the cursor, not fetched.
  EXPECT_EQ(order.stats().resolved, 8u);
}

TEST(ReadOrderTest, NothingToFetchIsSkipped) {
  ReadOrder order(3);
  order.Add(Targets(3));
  auto todo = order.TakeUnresolved();
  ASSERT_EQ(todo.positions.size(), 3u);
  order.Resolved(0, todo.generation, ObjectVersion{"b", Name(0), "e", 1});
  order.Resolved(1, todo.generation, std::nullopt);  // a directory, a link, gone
  order.Resolved(2, todo.generation, ObjectVersion{"b", Name(2), "e", 1});
  EXPECT_EQ(Keys(order.Wanted()), (std::vector<std::string>{Name(0), Name(2)}));
  EXPECT_TRUE(order.TakeUnresolved().positions.empty());
}

TEST(ReadOrderTest, ResetDropsTheOrderAndLateResolutions) {
  ReadOrder order(4);
  order.Add(Targets(8));
  auto old = order.TakeUnresolved();
  order.Reset();
  order.Add({{"b", "new0"}, {"b", "new1"}});
  for (auto& [pos, t] : old.positions) {
    order.Resolved(pos, old.generation, ObjectVersion{t.bucket, t.key, "e", 1});
  }
  EXPECT_TRUE(order.Wanted().empty());  // the old answers went nowhere
  EXPECT_FALSE(order.Opened("b", Name(0)));
  ResolveAll(order);
  EXPECT_EQ(Keys(order.Wanted()), (std::vector<std::string>{"new0", "new1"}));
  EXPECT_EQ(order.stats().announced, 2u);
}

TEST(ReadOrderTest, AFileAnnouncedTwiceIsOpenedTwice) {
  ReadOrder order(8);
  order.Add({{"b", "x"}, {"b", "y"}, {"b", "x"}});
  ResolveAll(order);
  ASSERT_TRUE(order.Opened("b", "x"));
  EXPECT_EQ(Keys(order.Wanted()), (std::vector<std::string>{"y", "x"}));
  ASSERT_TRUE(order.Opened("b", "x"));
  EXPECT_EQ(order.stats().cursor, 3u);
  EXPECT_EQ(Keys(order.Wanted()), (std::vector<std::string>{"y"}));
  EXPECT_FALSE(order.Opened("b", "x"));
}

}  // namespace
}  // namespace bucketfs::fs
