#include "handover/session_journal.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace bucketfs::handover {
namespace {

NodeRecord Node(uint64_t ino, const std::string& name) {
  return NodeRecord{ino, 1, false, name, "bucket", "dir/" + name};
}

std::vector<std::byte> Bytes(const std::string& s) {
  auto b = std::as_bytes(std::span(s.data(), s.size()));
  return {b.begin(), b.end()};
}

TEST(SessionRecords, EveryTypeRoundTrips) {
  const HandleRecord handle{7, 9, HandleKind::kRead, 1234, "\"etag\""};
  std::vector<std::vector<std::byte>> encoded = {EncodeInit(Bytes("init")),
                                                 EncodeNode(Node(5, "a")), EncodeNodeDrop(5),
                                                 EncodeOpen(handle), EncodeClose(7)};
  std::vector<RecordType> types = {RecordType::kInit, RecordType::kNode, RecordType::kNodeDrop,
                                   RecordType::kOpen, RecordType::kClose};
  for (size_t i = 0; i < encoded.size(); ++i) {
    size_t used = 0;
    auto rec = DecodeRecord(encoded[i], &used);
    ASSERT_TRUE(rec.has_value()) << i;
    EXPECT_EQ(rec->type, types[i]);
    EXPECT_EQ(used, encoded[i].size());
  }
  size_t used = 0;
  EXPECT_EQ(DecodeRecord(encoded[1], &used)->node, Node(5, "a"));
  EXPECT_EQ(DecodeRecord(encoded[3], &used)->handle, handle);
}

TEST(SessionRecords, CutOrDamagedRecordIsRefused) {
  auto rec = EncodeNode(Node(5, "name"));
  size_t used = 0;
  for (size_t cut = 0; cut < rec.size(); ++cut) {
    EXPECT_FALSE(DecodeRecord(std::span(rec).first(cut), &used).has_value()) << cut;
  }
  rec.back() ^= std::byte{1};
  EXPECT_FALSE(DecodeRecord(rec, &used).has_value());
}

TEST(SessionJournal, ReadBackWhatWasRecorded) {
  auto j = SessionJournal::Create();
  ASSERT_TRUE(j.ok()) << j.error().message;
  (*j)->RecordInit(Bytes("the INIT request"));
  (*j)->NodeChanged(Node(2, "a"));
  (*j)->NodeChanged(Node(3, "b"));
  (*j)->NodeChanged(NodeRecord{2, 1, false, "renamed", "bucket", "dir/renamed"});
  (*j)->NodeDropped(3);
  (*j)->HandleOpened({10, 2, HandleKind::kRead, 99, "e1"});
  (*j)->HandleOpened({11, 2, HandleKind::kWrite, 0, ""});
  (*j)->HandleClosed(11);
  auto state = SessionJournal::Read((*j)->fd());
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->init_request, Bytes("the INIT request"));
  ASSERT_EQ(state->nodes.size(), 1u);
  EXPECT_EQ(state->nodes.at(2).name, "renamed");
  ASSERT_EQ(state->handles.size(), 1u);
  EXPECT_EQ(state->handles.at(10).etag, "e1");
  EXPECT_TRUE((*j)->healthy());
}

TEST(SessionJournal, AdoptGoesOnAppendingAfterACutRecord) {
  auto j = SessionJournal::Create();
  ASSERT_TRUE(j.ok());
  (*j)->NodeChanged(Node(2, "kept"));
  // A crash in the middle of an append leaves part of a record.
  const auto partial = EncodeNode(Node(3, "cut"));
  struct stat st {};
  ASSERT_EQ(fstat((*j)->fd(), &st), 0);
  ASSERT_EQ(pwrite((*j)->fd(), partial.data(), partial.size() / 2, st.st_size),
            static_cast<ssize_t>(partial.size() / 2));
  SessionState state;
  auto adopted = SessionJournal::Adopt(dup((*j)->fd()), &state);
  ASSERT_TRUE(adopted.ok()) << adopted.error().message;
  EXPECT_EQ(state.nodes.size(), 1u);
  (*adopted)->NodeChanged(Node(4, "after"));
  auto again = SessionJournal::Read((*adopted)->fd());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->nodes.size(), 2u);
  EXPECT_TRUE(again->nodes.contains(4));
  EXPECT_FALSE(again->nodes.contains(3));
}

TEST(SessionJournal, NotAJournalIsRefused) {
  const int fd = memfd_create("other", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "hello", 5), 5);
  SessionState state;
  auto r = SessionJournal::Adopt(fd, &state);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a session journal"), std::string::npos);
}

TEST(SessionJournal, ChurnKeepsTheRegionProportionalToTheLiveSet) {
  auto j = SessionJournal::Create();
  ASSERT_TRUE(j.ok());
  (*j)->RecordInit(Bytes("init"));
  for (uint64_t i = 0; i < 10; ++i) (*j)->NodeChanged(Node(1000 + i, "live"));
  // Many lookups and forgets, as an epoch over many files makes.
  for (uint64_t i = 0; i < 50000; ++i) {
    (*j)->NodeChanged(Node(2000 + i, "file-with-a-longish-name-" + std::to_string(i)));
    (*j)->HandleOpened({i + 1, 2000 + i, HandleKind::kRead, i, "etag"});
    (*j)->HandleClosed(i + 1);
    (*j)->NodeDropped(2000 + i);
  }
  EXPECT_LT((*j)->region_bytes(), 2u << 20);
  struct stat st {};
  ASSERT_EQ(fstat((*j)->fd(), &st), 0);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, 4u << 20);  // pages punched out
  auto state = SessionJournal::Read((*j)->fd());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->init_request, Bytes("init"));
  EXPECT_EQ(state->nodes.size(), 10u);
  EXPECT_TRUE(state->handles.empty());
}

}  // namespace
}  // namespace bucketfs::handover
