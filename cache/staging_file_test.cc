// StagingFile::WriteBuffered: parts written from the writer's buffer (O_DIRECT
// where the file system allows) read back exactly, beside buffered writes of
// neighbouring ranges, with unaligned heads and tails, and with errors kept.
#include "cache/staging_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

namespace bucketfs::cache {
namespace {

// Counts bytes written through an O_DIRECT descriptor; fails writes on demand.
class CountingOps : public StagingFileOps {
 public:
  ssize_t PWrite(int fd, const void* buf, size_t n, off_t offset) override {
    if (fail_errno != 0) {
      errno = fail_errno;
      return -1;
    }
    const ssize_t r = StagingFileOps::PWrite(fd, buf, n, offset);
    const int flags = ::fcntl(fd, F_GETFL);
    if (r > 0 && flags >= 0 && (flags & O_DIRECT) != 0) direct += r;
    return r;
  }
  std::atomic<int64_t> direct{0};
  int fail_errno = 0;
};

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }  // NOLINT: aligned_alloc's
};

std::unique_ptr<std::byte[], AlignedFree> Aligned(size_t n, unsigned seed) {
  auto* p = static_cast<std::byte*>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096));
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(rng());
  return std::unique_ptr<std::byte[], AlignedFree>(p);
}

class StagingFileTest : public ::testing::Test {
 protected:
  StagingFileTest() {
    dir_ = std::filesystem::temp_directory_path() /
           ("staging_file_test-" + std::to_string(::getpid()));
    EXPECT_TRUE(EnsureStagingDir(dir_.string()).ok());
  }
  ~StagingFileTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<StagingFile> Make() {
    auto f = StagingFile::Create(dir_.string(), ops_, space_);
    EXPECT_TRUE(f.ok());
    return f.ok() ? std::move(*f) : nullptr;
  }

  std::filesystem::path dir_;
  std::shared_ptr<CountingOps> ops_ = std::make_shared<CountingOps>();
  std::shared_ptr<StagingSpace> space_ = std::make_shared<StagingSpace>();
};

TEST_F(StagingFileTest, BufferedPartsReadBackBesideOtherWrites) {
  auto f = Make();
  ASSERT_TRUE(f);
  constexpr size_t kPart = (1 << 20) + 100;  // an unaligned tail
  auto a = Aligned(kPart, 1);
  auto b = Aligned(kPart, 2);
  ASSERT_TRUE(f->Reserve(3 * (1 << 20) + 100).ok());
  EXPECT_EQ(f->size(), 3u * (1 << 20) + 100);
  EXPECT_EQ(space_->used(), 3u * (1 << 20) + 100);
  // Buffered write of a range before, the buffer after it, then a buffered
  // write right behind the buffer's unaligned tail.
  std::vector<std::byte> head(1 << 20, std::byte{7});
  ASSERT_TRUE(f->Write(0, head).ok());
  ASSERT_TRUE(f->WriteBuffered(1 << 20, {a.get(), kPart}).ok());
  ASSERT_TRUE(f->Write((2 << 20) + 100, {b.get(), (1 << 20)}).ok());
  // An unaligned start goes buffered all the way.
  ASSERT_TRUE(f->WriteBuffered(5, {b.get() + 1, 50}).ok());

  std::vector<std::byte> got(3 * (1 << 20) + 100);
  ASSERT_TRUE(f->Read(0, got).ok());
  EXPECT_EQ(std::memcmp(got.data() + 5, b.get() + 1, 50), 0);
  EXPECT_EQ(got[0], std::byte{7});
  EXPECT_EQ(got[55], std::byte{7});
  EXPECT_EQ(std::memcmp(got.data() + (1 << 20), a.get(), kPart), 0);
  EXPECT_EQ(std::memcmp(got.data() + (2 << 20) + 100, b.get(), 1 << 20), 0);
  // Where the file system has O_DIRECT (not tmpfs before Linux 6.6) the
  // aligned bulk skipped the page cache.
  if (ops_->direct.load() == 0) {
    GTEST_SKIP() << "no O_DIRECT on " << dir_ << "; buffered fallback checked";
  }
  EXPECT_EQ(ops_->direct.load(), 1 << 20);
}

TEST_F(StagingFileTest, BufferedWriteErrorsKeepTheirErrno) {
  auto f = Make();
  ASSERT_TRUE(f);
  auto a = Aligned(8192, 3);
  ASSERT_TRUE(f->Reserve(8192).ok());
  ops_->fail_errno = ENOSPC;
  EXPECT_EQ(f->WriteBuffered(0, {a.get(), 8192}).error().errno_value, ENOSPC);
  ops_->fail_errno = EIO;
  EXPECT_EQ(f->WriteBuffered(0, {a.get(), 8192}).error().errno_value, EIO);
}

TEST_F(StagingFileTest, ReserveCountsAgainstTheLimit) {
  space_ = std::make_shared<StagingSpace>(4096);
  auto f = Make();
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->Reserve(4096).ok());
  EXPECT_EQ(f->Reserve(4097).error().errno_value, ENOSPC);
  EXPECT_EQ(space_->used(), 4096u);
}

}  // namespace
}  // namespace bucketfs::cache
