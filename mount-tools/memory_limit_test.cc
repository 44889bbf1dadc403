#include "mount-tools/memory_limit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace bucketfs::tools {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

// A fake root with /proc/self/cgroup and files below /sys/fs/cgroup.
class FakeRoot {
 public:
  FakeRoot() {
    char tmpl[] = "/tmp/memory_limit_test.XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~FakeRoot() { std::filesystem::remove_all(root_); }
  void Put(const std::string& path, const std::string& text) const {
    const std::filesystem::path p = root_ + path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  const std::string& path() const { return root_; }

 private:
  std::string root_;
};

TEST(CgroupMemoryLimitTest, V2LimitOfTheProcessCgroup) {
  FakeRoot r;
  r.Put("/proc/self/cgroup", "0::/system.slice/bucketfs@data.service\n");
  r.Put("/sys/fs/cgroup/system.slice/bucketfs@data.service/memory.max", "8589934592\n");
  r.Put("/sys/fs/cgroup/system.slice/memory.max", "max\n");
  EXPECT_EQ(CgroupMemoryLimit(r.path()), 8 * kGiB);
}

TEST(CgroupMemoryLimitTest, V2MaxMeansNoLimit) {
  FakeRoot r;
  r.Put("/proc/self/cgroup", "0::/user.slice\n");
  r.Put("/sys/fs/cgroup/user.slice/memory.max", "max\n");
  EXPECT_EQ(CgroupMemoryLimit(r.path()), std::nullopt);
}

TEST(CgroupMemoryLimitTest, V2AncestorLimitApplies) {
  FakeRoot r;
  r.Put("/proc/self/cgroup", "0::/machine.slice/a/b\n");
  r.Put("/sys/fs/cgroup/machine.slice/a/b/memory.max", "max\n");
  r.Put("/sys/fs/cgroup/machine.slice/memory.max", "2147483648\n");
  EXPECT_EQ(CgroupMemoryLimit(r.path()), 2 * kGiB);
}

TEST(CgroupMemoryLimitTest, V2InsideACgroupNamespace) {
  FakeRoot r;  // a container: its own cgroup is the root of what it sees
  r.Put("/proc/self/cgroup", "0::/\n");
  r.Put("/sys/fs/cgroup/memory.max", "1073741824\n");
  EXPECT_EQ(CgroupMemoryLimit(r.path()), kGiB);
}

TEST(CgroupMemoryLimitTest, V1MemoryController) {
  FakeRoot r;
  r.Put("/proc/self/cgroup", "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n");
  r.Put("/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", "4294967296\n");
  r.Put("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(CgroupMemoryLimit(r.path()), 4 * kGiB);
}

TEST(CgroupMemoryLimitTest, V1UnlimitedAndMissingFiles) {
  FakeRoot r;
  r.Put("/proc/self/cgroup", "4:cpu,memory:/x\n");
  r.Put("/sys/fs/cgroup/memory/x/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(CgroupMemoryLimit(r.path()), std::nullopt);
  FakeRoot empty;
  EXPECT_EQ(CgroupMemoryLimit(empty.path()), std::nullopt);
}

TEST(AvailableMemoryTest, LowerOfRamAndLimit) {
  FakeRoot r;
  r.Put("/proc/self/cgroup", "0::/svc\n");
  r.Put("/sys/fs/cgroup/svc/memory.max", "8589934592\n");
  AvailableMemory m = AvailableMemoryFor(64 * kGiB, r.path());
  EXPECT_EQ(m.bytes, 8 * kGiB);
  EXPECT_TRUE(m.from_cgroup);
  m = AvailableMemoryFor(4 * kGiB, r.path());  // a limit above RAM changes nothing
  EXPECT_EQ(m.bytes, 4 * kGiB);
  EXPECT_FALSE(m.from_cgroup);
}

TEST(DefaultReadBudgetTest, ExplainsWhereTheNumberComesFrom) {
  DefaultReadBudget b = ChooseDefaultReadBudget({.bytes = 8 * kGiB, .from_cgroup = true});
  EXPECT_EQ(b.bytes, 2 * kGiB);
  EXPECT_EQ(b.explanation, "read-ahead memory budget 2 GiB: 25% of cgroup limit 8 GiB");
  b = ChooseDefaultReadBudget({.bytes = 64 * kGiB, .from_cgroup = false});
  EXPECT_EQ(b.bytes, 4 * kGiB);
  EXPECT_EQ(b.explanation, "read-ahead memory budget 4 GiB: 25% of RAM 64 GiB, capped at 4 GiB");
  b = ChooseDefaultReadBudget({.bytes = 512ull << 20, .from_cgroup = true});
  EXPECT_EQ(b.bytes, 256ull << 20);
  EXPECT_EQ(b.explanation,
            "read-ahead memory budget 256 MiB: 25% of cgroup limit 512 MiB, raised to the "
            "minimum 256 MiB");
  b = ChooseDefaultReadBudget({.bytes = 6 * kGiB + kGiB / 2, .from_cgroup = true});
  EXPECT_THAT(b.explanation, ::testing::EndsWith("cgroup limit 6.5 GiB"));
}

}  // namespace
}  // namespace bucketfs::tools
