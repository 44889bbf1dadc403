#include "mount-tools/tree_warmer.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace bucketfs::tools {
namespace {

// Root reads any directory through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH.
// Capabilities belong to a thread and new threads inherit them, so clearing
// the two from this thread's effective set (they stay permitted) makes an
// unreadable directory unreadable to the walk's threads started afterwards;
// the destructor raises them again.
class WithoutDacOverride {
 public:
  WithoutDacOverride() {
    if (::syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct data[2] = {saved_[0], saved_[1]};
    data[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    ok_ = ::syscall(SYS_capset, &header_, data) == 0;
  }
  ~WithoutDacOverride() {
    if (ok_) ::syscall(SYS_capset, &header_, saved_);
  }
  bool ok() const { return ok_; }

 private:
  __user_cap_header_struct header_{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct saved_[2] = {};
  bool ok_ = false;
};

class TreeWarmerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tree-warmer-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void Dir(const std::string& rel) { ASSERT_EQ(::mkdir((root_ + "/" + rel).c_str(), 0755), 0); }
  void File(const std::string& rel) { std::ofstream(root_ + "/" + rel) << "x"; }

  std::string root_;
};

TEST_F(TreeWarmerTest, CountsEveryDirectoryAndFileOfADeepWideTree) {
  for (int d = 0; d < 20; ++d) {
    const std::string dir = "d" + std::to_string(d);
    Dir(dir);
    Dir(dir + "/sub");
    for (int f = 0; f < 5; ++f) File(dir + "/sub/f" + std::to_string(f));
    File(dir + "/top");
  }
  File("root-file");
  for (int threads : {1, 4, 16}) {
    TreeWarmer warmer(threads);
    auto counts = warmer.Walk(root_);
    ASSERT_TRUE(counts.ok()) << counts.error().ToString();
    EXPECT_EQ(counts->dirs, 41u) << threads;  // root + 20 + 20
    EXPECT_EQ(counts->files, 121u) << threads;
    EXPECT_EQ(counts->errors, 0u);
    EXPECT_EQ(warmer.entries(), 40u + 121u) << threads;
  }
}

TEST_F(TreeWarmerTest, AMissingRootFailsAndAFileRootIsNotADirectory) {
  TreeWarmer warmer(2);
  auto missing = warmer.Walk(root_ + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errno_value, ENOENT);
  File("plain");
  auto file = warmer.Walk(root_ + "/plain");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().errno_value, ENOTDIR);
}

TEST_F(TreeWarmerTest, AnUnreadableDirectoryIsCountedAsAnErrorAndTheWalkGoesOn) {
  Dir("ok");
  File("ok/f");
  Dir("locked");
  ASSERT_EQ(::chmod((root_ + "/locked").c_str(), 0), 0);
  Result<WarmCounts> counts = MakeError(EIO, "NotRun", "not run");
  {
    WithoutDacOverride unprivileged;
    ASSERT_TRUE(unprivileged.ok() || ::geteuid() != 0) << "cannot drop root's DAC override";
    TreeWarmer warmer(2);
    counts = warmer.Walk(root_);
  }
  ::chmod((root_ + "/locked").c_str(), 0755);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->errors, 1u);
  EXPECT_NE(counts->first_error.find("locked"), std::string::npos) << counts->first_error;
  EXPECT_EQ(counts->files, 1u);
}

}  // namespace
}  // namespace bucketfs::tools
