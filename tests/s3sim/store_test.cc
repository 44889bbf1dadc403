#include "tests/s3sim/store.h"

#include <gtest/gtest.h>

#include "tests/s3sim/util.h"

namespace s3sim {
namespace {

Part MakePart(const std::string& data) {
  Part p;
  p.md5 = Md5(data);
  p.etag = "\"" + Hex(p.md5) + "\"";
  p.data = std::make_shared<const std::string>(data);
  return p;
}

TEST(Etag, SingleAndMultipartAsS3ComputesThem) {
  EXPECT_EQ(SinglePartEtag(""), "\"d41d8cd98f00b204e9800998ecf8427e\"");
  EXPECT_EQ(SinglePartEtag("hello\n"), "\"b1946ac92492d2347c6235b4d2611184\"");
  // MD5 of the concatenated binary MD5s of "a" and "b", then "-2".
  std::string concat = Md5("a") + Md5("b");
  EXPECT_EQ(MultipartEtag({Md5("a"), Md5("b")}), "\"" + Hex(Md5(concat)) + "-2\"");
  EXPECT_EQ(Unquote("\"abc\""), "abc");
  EXPECT_EQ(Unquote("abc"), "abc");
}

class StoreTest : public ::testing::Test {
 protected:
  StoreTest() : store_(4) { store_.CreateBucket("b"); }
  Store store_;
};

TEST_F(StoreTest, BucketLifecycle) {
  EXPECT_FALSE(store_.CreateBucket("b"));
  EXPECT_TRUE(store_.BucketExists("b"));
  auto obj = std::make_shared<Object>();
  obj->data = std::make_shared<const Body>("x");
  EXPECT_FALSE(store_.Put("b", "k", obj));
  EXPECT_EQ(store_.DeleteBucket("b")->code, "BucketNotEmpty");
  EXPECT_FALSE(store_.Delete("b", "k"));
  EXPECT_FALSE(store_.Delete("b", "k"));  // deleting a missing key succeeds
  EXPECT_FALSE(store_.DeleteBucket("b"));
  EXPECT_EQ(store_.DeleteBucket("b")->code, "NoSuchBucket");
  EXPECT_EQ(store_.Get("b", "k").error().code, "NoSuchBucket");
}

TEST_F(StoreTest, GetKeepsOldDataAliveAcrossReplace) {
  auto v1 = std::make_shared<Object>();
  v1->data = std::make_shared<const Body>("one");
  store_.Put("b", "k", v1);
  ObjectPtr held = *store_.Get("b", "k");
  auto v2 = std::make_shared<Object>();
  v2->data = std::make_shared<const Body>("two");
  store_.Put("b", "k", v2);
  EXPECT_EQ(*held->data, "one");
  EXPECT_EQ(*(*store_.Get("b", "k"))->data, "two");
}

TEST_F(StoreTest, CompleteValidatesOrderEtagsAndSizes) {
  auto id = store_.CreateUpload("b", "k", "", {});
  ASSERT_TRUE(id.ok());
  Part p1 = MakePart("aaaa"), p2 = MakePart("bbbbb"), p3 = MakePart("c");
  ASSERT_FALSE(store_.PutPart("b", "k", *id, 1, p1));
  ASSERT_FALSE(store_.PutPart("b", "k", *id, 2, p2));
  ASSERT_FALSE(store_.PutPart("b", "k", *id, 3, p3));
  EXPECT_EQ(store_.PutPart("b", "other", *id, 1, p1)->code, "NoSuchUpload");

  EXPECT_EQ(store_.Complete("b", "k", *id, {{2, p2.etag}, {1, p1.etag}}).error().code,
            "InvalidPartOrder");
  EXPECT_EQ(store_.Complete("b", "k", *id, {{1, "\"00\""}}).error().code, "InvalidPart");
  EXPECT_EQ(store_.Complete("b", "k", *id, {{4, p1.etag}}).error().code, "InvalidPart");
  EXPECT_EQ(store_.Complete("b", "k", *id, {{3, p3.etag}, {4, p1.etag}}).error().code,
            "InvalidPart");
  EXPECT_EQ(store_.Complete("b", "k", *id, {}).error().code, "MalformedXML");
  // Part 3 (1 byte) may only be last.
  Store small(4);
  small.CreateBucket("b");
  auto id2 = small.CreateUpload("b", "k", "", {});
  small.PutPart("b", "k", *id2, 1, p3);
  small.PutPart("b", "k", *id2, 2, p1);
  EXPECT_EQ(small.Complete("b", "k", *id2, {{1, p3.etag}, {2, p1.etag}}).error().code,
            "EntityTooSmall");

  // Parts may be skipped; etags match with or without quotes.
  auto obj = store_.Complete("b", "k", *id, {{1, p1.etag}, {3, std::string(Unquote(p3.etag))}});
  ASSERT_TRUE(obj.ok()) << obj.error().code;
  EXPECT_EQ(*(*obj)->data, "aaaac");
  EXPECT_EQ((*obj)->etag, MultipartEtag({p1.md5, p3.md5}));
  EXPECT_EQ(store_.Abort("b", "k", *id)->code, "NoSuchUpload");  // completed uploads are gone
}

TEST_F(StoreTest, CompleteKeepsThePartsBuffersInsteadOfCopyingThem) {
  auto id = store_.CreateUpload("b", "k", "", {});
  ASSERT_TRUE(id.ok());
  Part p1 = MakePart("aaaa"), p2 = MakePart("bbbb"), p3 = MakePart("cc");
  ASSERT_FALSE(store_.PutPart("b", "k", *id, 1, p1));
  ASSERT_FALSE(store_.PutPart("b", "k", *id, 2, p2));
  ASSERT_FALSE(store_.PutPart("b", "k", *id, 3, p3));
  auto obj = store_.Complete("b", "k", *id, {{1, p1.etag}, {2, p2.etag}, {3, p3.etag}});
  ASSERT_TRUE(obj.ok()) << obj.error().code;
  const Body& body = *(*obj)->data;
  EXPECT_EQ(body, "aaaabbbbcc");
  ASSERT_EQ(body.chunk_count(), 3u);
  EXPECT_EQ(body.Piece(0).data(), p1.data->data());
  EXPECT_EQ(body.Piece(4).data(), p2.data->data());
  EXPECT_EQ(body.Piece(8).data(), p3.data->data());
  EXPECT_EQ((*obj)->etag, MultipartEtag({p1.md5, p2.md5, p3.md5}));
  // A copy of a multipart object gets the MD5 of all its bytes.
  EXPECT_EQ(SinglePartEtag(body), SinglePartEtag("aaaabbbbcc"));
}

TEST_F(StoreTest, ListUploadsByPrefix) {
  auto a = store_.CreateUpload("b", "x/1", "", {});
  auto c = store_.CreateUpload("b", "y/1", "", {});
  auto ups = store_.ListUploads("b", "x/");
  ASSERT_TRUE(ups.ok());
  ASSERT_EQ(ups->size(), 1u);
  EXPECT_EQ((*ups)[0].id, *a);
  EXPECT_FALSE(store_.Abort("b", "y/1", *c));
  EXPECT_EQ(store_.ListUploads("nob", "").error().code, "NoSuchBucket");
}

}  // namespace
}  // namespace s3sim
