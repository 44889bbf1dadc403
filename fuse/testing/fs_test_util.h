// Helpers for the filesystem core's unit tests: a Filesystem over a
// FakeObjectClient, and readdir/read/write shorthands.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fuse/filesystem.h"
#include "fuse/staged_writer_factory.h"
#include "s3/testing/fake_object_client.h"

namespace bucketfs::fs::testing {

using s3::testing::FakeObjectClient;

struct DirEntryView {
  std::string name;
  bool is_dir = false;
  uint64_t size = 0;
  Ino ino = 0;  // readdirplus only
  off_t next = 0;
};

class FsTest : public ::testing::Test {
 protected:
  static constexpr const char* kBucket = "bkt";

  FsTest() { client_->CreateBucketNamed(kBucket); }

  // (Re)creates the filesystem with `config` (bucket defaults to kBucket).
  Filesystem& Mount(FsConfig config = {}) {
    if (config.bucket.empty() && !all_buckets_) config.bucket = kBucket;
    fs_ = std::make_unique<Filesystem>(
        client_, config,
        FsComponents{MakeDirectReaderFactory(client_), MakeStagedWriterFactory(client_, config)});
    return *fs_;
  }

  // Every entry of `dir`, read through one handle with a reply buffer that
  // holds at most `per_call` entries (so offsets are exercised).
  std::vector<DirEntryView> ListDir(Ino dir, bool plus, size_t per_call = 1000) {
    std::vector<DirEntryView> out;
    auto fh = fs_->OpenDir(dir);
    EXPECT_TRUE(fh.ok());
    if (!fh.ok()) return out;
    off_t offset = 0;
    for (;;) {
      size_t added = 0;
      Status s = fs_->ReadDir(
          dir, fh->fh, offset, plus,
          [&](const std::string& name, const struct stat& st, const Entry* entry, off_t next) {
            if (added == per_call) return false;
            ++added;
            out.push_back({name, S_ISDIR(st.st_mode), static_cast<uint64_t>(st.st_size),
                           entry ? entry->ino : 0, next});
            offset = next;
            return true;
          });
      EXPECT_TRUE(s.ok()) << s.error().ToString();
      if (!s.ok() || added == 0) break;
    }
    fs_->ReleaseDir(fh->fh);
    return out;
  }

  // Releases `fh` on a thread of its own and returns once that release is
  // uploading the file, with the PutObject held until
  // client_->Release("PutObject"): the gap between close() and the end of
  // the upload, in which the kernel may already send the next request.
  std::thread ReleaseHoldingThePut(uint64_t fh) {
    client_->Hold("PutObject");
    std::thread release([this, fh] { fs_->Release(fh); });
    while (client_->Waiting("PutObject") == 0) std::this_thread::yield();
    return release;
  }

  static std::vector<std::string> Names(const std::vector<DirEntryView>& entries) {
    std::vector<std::string> names;
    names.reserve(entries.size());
    for (const auto& e : entries) names.push_back(e.name);
    return names;
  }

  std::string ReadAll(Ino ino, size_t chunk = 4096) {
    auto opened = fs_->Open(ino, O_RDONLY);
    EXPECT_TRUE(opened.ok());
    if (!opened.ok()) return {};
    std::string data;
    std::vector<std::byte> buf(chunk);
    for (;;) {
      auto n = fs_->Read(opened->fh, data.size(), buf);
      EXPECT_TRUE(n.ok());
      if (!n.ok() || *n == 0) break;
      data.append(reinterpret_cast<const char*>(buf.data()), *n);
    }
    fs_->Release(opened->fh);
    return data;
  }

  // Create, write, close (flush by the opener, then release) as an application does.
  void WriteAndClose(Ino dir, const std::string& name, const std::string& data) {
    auto c = fs_->Create(dir, name, O_WRONLY | O_CREAT);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(fs_->Write(c->second.fh, 0, Bytes(data)).ok());
    ASSERT_TRUE(fs_->Flush(c->second.fh).ok());
    fs_->Release(c->second.fh);
  }

  static std::span<const std::byte> Bytes(const std::string& s) {
    return std::as_bytes(std::span(s.data(), s.size()));
  }

  std::shared_ptr<FakeObjectClient> client_ = std::make_shared<FakeObjectClient>();
  std::unique_ptr<Filesystem> fs_;
  bool all_buckets_ = false;
};

}  // namespace bucketfs::fs::testing
